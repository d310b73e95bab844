//! Throughput of the worker pool on real JAX (`cargo bench -p pallas-diff-tpu-runner`):
//! distinct kernels per second (each one traced and compiled anew) with 1 and 2 workers, and
//! input sets per second re-running one compiled kernel. Prints a table.
//!
//! `PALLAS_DIFF_BENCH_KERNELS` (default 24) and `PALLAS_DIFF_BENCH_INPUTS` (default 300) set the
//! counts.

use lang::tensor::{DType, Tensor};
use pallas_diff_tpu_runner::{Mode, Pool, PoolConfig, RunRequest, provision};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

fn kernel(c: usize) -> String {
    format!(
        r#"import jax
from jax.experimental import pallas as pl

def make(interpret):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * {c}.0 + 1.0

    def f(x):
        return (pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=interpret)(x),)

    return f
"#
    )
}

fn input(k: usize) -> Tensor {
    Tensor::new(
        DType::Float32,
        vec![8, 128],
        (0..1024).map(|i| ((i + k) % 97) as f64).collect(),
    )
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `n` requests made by `make(i)` from `threads` threads; returns requests per second.
fn throughput(
    pool: &Pool,
    threads: usize,
    n: usize,
    make: impl Fn(usize) -> RunRequest + Sync,
) -> f64 {
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let result = pool.run(&make(i)).unwrap_or_else(|e| panic!("{e}"));
                    if let Err(e) = result.outcome {
                        panic!("kernel {i} failed: {e}\n{}", e.traceback);
                    }
                }
            });
        }
    });
    n as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let python = provision().unwrap_or_else(|e| panic!("{e}"));
    let kernels = env_count("PALLAS_DIFF_BENCH_KERNELS", 24);
    let inputs = env_count("PALLAS_DIFF_BENCH_INPUTS", 300);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "pallas-diff-tpu-runner pool benchmark ({cores} cores, python {})",
        python.display()
    );
    println!(
        "{:<54} {:>7} {:>10} {:>12}",
        "measurement", "workers", "count", "per second"
    );

    let mut seed = 1_000;
    for workers in [1, 2] {
        let pool = Pool::new(PoolConfig::new(&python).with_workers(workers))
            .unwrap_or_else(|e| panic!("{e}"));
        // Warm up every worker (first-use costs inside JAX), with kernels not measured below.
        throughput(&pool, workers, 2 * workers, |i| RunRequest {
            mode: Mode::PallasInterpret,
            source: kernel(seed + i),
            inputs: vec![input(i)],
            call: None,
            input_sets: Vec::new(),
        });
        seed += 100;
        for mode in [
            Mode::PallasInterpret,
            Mode::PallasTpuInterpret,
            Mode::PallasTpuLower,
        ] {
            let base = seed;
            let rate = throughput(&pool, workers, kernels, |i| RunRequest {
                mode,
                source: kernel(base + i),
                inputs: vec![input(i)],
                call: None,
                input_sets: Vec::new(),
            });
            seed += kernels;
            println!(
                "{:<54} {workers:>7} {kernels:>10} {rate:>12.1}",
                format!("distinct kernels, {mode}")
            );
        }
        for (mode, n) in [
            (Mode::PallasInterpret, inputs),
            (Mode::PallasTpuInterpret, inputs / 6),
        ] {
            let source = kernel(7);
            // Compile once on every worker, then measure re-runs with new inputs.
            throughput(&pool, workers, 2 * workers, |i| RunRequest {
                mode,
                source: source.clone(),
                inputs: vec![input(i)],
                call: None,
                input_sets: Vec::new(),
            });
            let rate = throughput(&pool, workers, n, |i| RunRequest {
                mode,
                source: source.clone(),
                inputs: vec![input(i)],
                call: None,
                input_sets: Vec::new(),
            });
            println!(
                "{:<54} {workers:>7} {n:>10} {rate:>12.1}",
                format!("input sets, one compiled kernel, {mode}")
            );
        }
    }
}
