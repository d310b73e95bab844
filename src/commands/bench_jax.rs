//! `pallas-diff bench --jax N`: the JAX side of confirmation, in one run: distinct kernels per
//! CPU second and per wall second through each JAX interpreter, today's one-kernel-per-compile
//! path (`Pool::run`) beside the batched one (`Pool::run_batch`, K kernels compiled as one
//! function), on the same N generated kernels, with the worker's per-stage split (trace, lower,
//! compile, run).
//!
//! The kernels are the campaign's own: case `i` of the seed, kept when our compiler lowers it
//! and the reference runs it (what a campaign sends to JAX), until N are found. Every path runs
//! on a fresh one-worker pool started before the clock (JAX imported, nothing of the kernels
//! cached), one after the other, so the paths do not share a core. CPU seconds are the worker's
//! (`/proc/PID/stat`) plus this process's over the path. The outputs of every batched path must
//! be bit-identical to those of the single path with the same XLA options (and a failure must be
//! the same failure): the benchmark checks it and exits with status 1 when they are not. The
//! opt-in fast XLA options ([`tpu_runner::FAST_COMPILE_XLA_FLAGS`]) are measured too; their
//! single path is compared with the default one for information only (they may legitimately
//! change a float sum's last bit).

use super::{CliError, Exit};
use compiler::compile::{CodegenOptions, compile};
use fuzz::campaign::case_seed;
use fuzz::engines::EngineId;
use fuzz::generators::{GenConfig, generate_from_seed};
use lang::tensor::Tensor;
use serde::Serialize;
use std::time::Instant;
use tpu_runner::{
    Mode, Pool, PoolConfig, RunError, RunRequest, RunResult, StageSeconds, XlaCompile,
};

/// The interpreters a campaign confirms with (`pallas-tpu-lower` compiles nothing).
const MODES: [Mode; 2] = [Mode::PallasInterpret, Mode::PallasTpuInterpret];

/// How a path sends and compiles its kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Path {
    /// `None`: one request, one compile per kernel (`Pool::run`); `Some(k)`: `Pool::run_batch`
    /// with `k` kernels per request.
    batch: Option<usize>,
    /// The workers' XLA options: [`XlaCompile::Default`] is every pool's; the opt-in
    /// [`XlaCompile::Fast`] changes float reduction orders, so its paths are compared bit for
    /// bit with its own single path (and its single path with the default's, for information).
    xla: XlaCompile,
}

impl Path {
    /// Today's path before this benchmark's levers: one compile per kernel, XLA's defaults.
    const BEFORE: Path = Path {
        batch: None,
        xla: XlaCompile::Default,
    };
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.batch {
            None => f.write_str("single")?,
            Some(k) => write!(f, "batch {k}")?,
        }
        match self.xla {
            XlaCompile::Default => f.write_str(", default-xla"),
            XlaCompile::Fast => f.write_str(", fast-xla"),
        }
    }
}

/// One measured path of one mode.
#[derive(Debug, Serialize)]
struct PathRow {
    mode: Mode,
    #[serde(skip)]
    path: Path,
    /// Kernels per request (`None`: one request each).
    batch: Option<usize>,
    /// Whether the workers ran [`tpu_runner::FAST_COMPILE_XLA_FLAGS`].
    fast_xla: bool,
    kernels: usize,
    wall_seconds: f64,
    cpu_seconds: Option<f64>,
    kernels_per_second: f64,
    kernels_per_cpu_second: Option<f64>,
    /// Worker milliseconds per kernel, per stage.
    stage_ms: StageSeconds,
    /// Kernels that failed (the same ones on every path, or the check fails).
    failed: usize,
    /// Batches that failed whole and were split into single runs.
    splits: usize,
    /// Kernels whose result differs from the single path's with the same XLA options (the
    /// fast single path: from the default single path); bits of the outputs, or the failure's
    /// stage and class.
    differ: usize,
}

/// CPU seconds (user + system) of process `pid` (`/proc/PID/stat` fields 14 and 15, in ticks of
/// 1/100 s, Linux's `USER_HZ`), `self` for this process.
pub(super) fn cpu_seconds_of(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields restart after its closing paren.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// CPU seconds of this process and of the pool's workers together.
fn cpu_now(pool: &Pool) -> Option<f64> {
    let mut total = cpu_seconds_of("self")?;
    for pid in pool.worker_pids() {
        total += cpu_seconds_of(&pid.to_string())?;
    }
    Some(total)
}

/// The first `n` kernels of campaign seed `seed` that a campaign would send to JAX: lowered by
/// our compiler, run by the reference. Gives up after `100 * n` cases.
fn kernels(n: usize, seed: u64) -> Vec<(String, Vec<Tensor>)> {
    let cfg = GenConfig::default().normalized();
    let options = CodegenOptions::default();
    let mut out = Vec::new();
    for i in 0..(100 * n as u64) {
        if out.len() >= n {
            break;
        }
        let case = generate_from_seed(case_seed(seed, i), &cfg);
        let compiled = compile(&case, &options);
        let Some(source) = compiled.source() else {
            continue;
        };
        let all = case.input_tensors();
        if oracle::evaluate_with_inputs(&case, &all).is_err() {
            continue;
        }
        let Ok(all) = all else { continue };
        let args = case
            .kernel_arg_positions()
            .into_iter()
            .map(|p| all[p].clone())
            .collect();
        out.push((source.to_string(), args));
    }
    out
}

/// Whether two results of one kernel are the same: equal output bits, or the same failure.
fn same(a: &Result<RunResult, RunError>, b: &Result<RunResult, RunError>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => match (&a.outcome, &b.outcome) {
            (Ok(x), Ok(y)) => {
                x.len() == y.len()
                    && x.iter().zip(y).all(|(p, q)| {
                        p.dtype == q.dtype
                            && p.shape == q.shape
                            && p.to_le_bytes() == q.to_le_bytes()
                    })
            }
            (Err(x), Err(y)) => x.stage == y.stage && x.kind == y.kind && x.cause == y.cause,
            (Ok(_), Err(_)) | (Err(_), Ok(_)) => false,
        },
        (Err(x), Err(y)) => std::mem::discriminant(x) == std::mem::discriminant(y),
        (Ok(_), Err(_)) | (Err(_), Ok(_)) => false,
    }
}

fn failed(r: &Result<RunResult, RunError>) -> bool {
    !matches!(r, Ok(RunResult { outcome: Ok(_), .. }))
}

/// Runs `requests` along `path` on a fresh one-worker pool.
fn measure(
    python: &std::path::Path,
    mode: Mode,
    path: Path,
    requests: &[RunRequest],
) -> Result<(PathRow, Vec<Result<RunResult, RunError>>), CliError> {
    let pool = Pool::new(
        PoolConfig::new(python)
            .with_workers(1)
            .with_xla_compile(path.xla),
    )
    .map_err(|e| CliError::Internal(anyhow::anyhow!("the JAX worker does not start: {e}")))?;
    let cpu0 = cpu_now(&pool);
    let start = Instant::now();
    let mut stages = StageSeconds::default();
    let mut splits = 0;
    let results: Vec<Result<RunResult, RunError>> = match path.batch {
        None => requests
            .iter()
            .map(|r| {
                let result = pool.run(r);
                if let Ok(r) = &result {
                    stages.add(&r.stages);
                }
                result
            })
            .collect(),
        Some(k) => {
            // As the JAX engines batch (`fuzz::engines::jax`): a kernel likely to hit a known
            // issue runs alone, the others `k` at a time.
            let mut results: Vec<Option<Result<RunResult, RunError>>> =
                (0..requests.len()).map(|_| None).collect();
            let mut pending: Vec<usize> = Vec::new();
            let flush = |pending: &mut Vec<usize>,
                         results: &mut Vec<_>,
                         stages: &mut StageSeconds,
                         splits: &mut usize| {
                let chunk: Vec<RunRequest> = pending.iter().map(|&i| requests[i].clone()).collect();
                let batch = pool.run_batch(mode, &chunk);
                stages.add(&batch.stages);
                *splits += usize::from(batch.split);
                for (&i, r) in pending.iter().zip(batch.results) {
                    results[i] = Some(r);
                }
                pending.clear();
            };
            for (i, r) in requests.iter().enumerate() {
                if fuzz::known_issues::likely_known_issue(EngineId::Worker(mode), &r.source) {
                    let result = pool.run(r);
                    if let Ok(r) = &result {
                        stages.add(&r.stages);
                    }
                    results[i] = Some(result);
                } else {
                    pending.push(i);
                    if pending.len() >= k.max(1) {
                        flush(&mut pending, &mut results, &mut stages, &mut splits);
                    }
                }
            }
            if !pending.is_empty() {
                flush(&mut pending, &mut results, &mut stages, &mut splits);
            }
            results.into_iter().flatten().collect()
        }
    };
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_now(&pool).zip(cpu0).map(|(b, a)| b - a);
    let n = requests.len();
    let per_kernel_ms = 1e3 / n.max(1) as f64;
    let row = PathRow {
        mode,
        path,
        batch: path.batch,
        fast_xla: path.xla == XlaCompile::Fast,
        kernels: n,
        wall_seconds: wall,
        cpu_seconds: cpu,
        kernels_per_second: n as f64 / wall.max(1e-9),
        kernels_per_cpu_second: cpu.filter(|&c| c > 0.0).map(|c| n as f64 / c),
        stage_ms: StageSeconds {
            trace: stages.trace * per_kernel_ms,
            lower: stages.lower * per_kernel_ms,
            compile: stages.compile * per_kernel_ms,
            run: stages.run * per_kernel_ms,
        },
        failed: results.iter().filter(|r| failed(r)).count(),
        splits,
        differ: 0,
    };
    Ok((row, results))
}

/// Runs the benchmark on `n` kernels of seed `seed`, batched `ks` kernels at a time; with
/// `dump`, first writes the kernels there as JSON lines `{"source","inputs"}` (the fields of a
/// worker `run` request, for profiling the worker by hand).
pub fn run(
    n: u64,
    ks: &[usize],
    seed: u64,
    json: bool,
    dump: Option<&std::path::Path>,
) -> Result<Exit, CliError> {
    let python = tpu_runner::provision()
        .map_err(|e| CliError::Input(anyhow::anyhow!("cannot bench JAX: {e}")))?;
    let kernels = kernels(n as usize, seed);
    if let Some(path) = dump {
        let mut text = String::new();
        for (source, inputs) in &kernels {
            let line = serde_json::json!({
                "source": source,
                "inputs": inputs.iter().map(tpu_runner::protocol::WireTensor::encode).collect::<Vec<_>>(),
            });
            text.push_str(&line.to_string());
            text.push('\n');
        }
        std::fs::write(path, text).map_err(|e| {
            CliError::Input(anyhow::anyhow!("cannot write {}: {e}", path.display()))
        })?;
    }
    let mut rows = Vec::new();
    for mode in MODES {
        let requests: Vec<RunRequest> = kernels
            .iter()
            .map(|(source, inputs)| RunRequest::module(mode, source.clone(), inputs.clone()))
            .collect();
        let (row, baseline) = measure(&python, mode, Path::BEFORE, &requests)?;
        if !json {
            print_row(&row, None);
        }
        let before = row.kernels_per_cpu_second;
        rows.push(row);
        let mut paths: Vec<Path> = ks
            .iter()
            .map(|&k| Path {
                batch: Some(k),
                xla: XlaCompile::Default,
            })
            .collect();
        paths.push(Path {
            batch: None,
            xla: XlaCompile::Fast,
        });
        paths.extend(ks.iter().map(|&k| Path {
            batch: Some(k),
            xla: XlaCompile::Fast,
        }));
        let mut fast_baseline = None;
        for path in paths {
            let (mut row, results) = measure(&python, mode, path, &requests)?;
            let against = match (path.xla, path.batch, &fast_baseline) {
                (XlaCompile::Fast, Some(_), Some(fast)) => fast,
                (XlaCompile::Default | XlaCompile::Fast, _, _) => &baseline,
            };
            row.differ = against
                .iter()
                .zip(&results)
                .filter(|(a, b)| !same(a, b))
                .count();
            if !json {
                print_row(&row, before);
            }
            rows.push(row);
            if path.xla == XlaCompile::Fast && path.batch.is_none() {
                fast_baseline = Some(results);
            }
        }
    }
    // Batching must not change a bit; the fast XLA options may (their single path's `differ`
    // is information).
    let identical = rows.iter().all(|r| r.differ == 0 || r.path.batch.is_none());
    if json {
        let out = serde_json::json!({
            "seed": seed,
            "kernels": kernels.len(),
            "paths": rows,
            "bit_identical": identical,
        });
        println!(
            "{}",
            serde_json::to_string(&out).map_err(anyhow::Error::from)?
        );
    } else {
        println!(
            "\n{} kernels (seed {seed}), one fresh worker per path, ms are worker ms per kernel; \
             outputs of every batched path {} the single path's with the same XLA options",
            kernels.len(),
            if identical {
                "bit-identical to"
            } else {
                "DIFFER from"
            }
        );
    }
    Ok(if identical { Exit::Ok } else { Exit::Internal })
}

fn print_row(r: &PathRow, single_rate: Option<f64>) {
    if r.path == Path::BEFORE {
        println!(
            "\n{:<22} {:>10} {:>9} {:>9}  {:>8} {:>8} {:>8} {:>8}  {:>6} {:>6}",
            r.mode.name(),
            "kern/cpu-s",
            "kern/s",
            "vs before",
            "trace ms",
            "lower ms",
            "compile",
            "run ms",
            "failed",
            "differ"
        );
    }
    let ratio = match (r.kernels_per_cpu_second, single_rate) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        (Some(_) | None, _) => "-".into(),
    };
    let split = if r.splits > 0 {
        format!(" ({} split)", r.splits)
    } else {
        String::new()
    };
    println!(
        "  {:<20} {:>10} {:>9.2} {:>9}  {:>8.1} {:>8.1} {:>8.1} {:>8.1}  {:>6} {:>6}{split}",
        r.path.to_string(),
        r.kernels_per_cpu_second
            .map_or("-".into(), |v| format!("{v:.2}")),
        r.kernels_per_second,
        ratio,
        r.stage_ms.trace,
        r.stage_ms.lower,
        r.stage_ms.compile,
        r.stage_ms.run,
        r.failed,
        r.differ
    );
}
