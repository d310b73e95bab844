//! A timed loop (complementing `benches/compile.rs`): plan + emit of the typical case
//! `corpus/spec-kernels/case_script_example.py`, per stage, as the median over batches of the
//! *CPU time* of this thread (`/proc/thread-self/schedstat`, so a loaded machine inflates it
//! less than wall time). Budget: plan + emit ≤ 100 µs on one core.
//!
//! `cargo test --release -p pallas-diff-compiler --test codegen_timing -- --ignored --nocapture`

use pallas_diff_compiler::compile::{CodegenOptions, compile};
use pallas_diff_compiler::frontend::parse_case;
use pallas_diff_compiler::ir::types::infer;
use pallas_diff_compiler::lower::lower;
use pallas_diff_compiler::pallas::print_module;
use pallas_diff_compiler::plan::plan;
use std::hint::black_box;
use std::time::Instant;

/// CPU nanoseconds of this thread, or wall-clock nanoseconds where schedstat is unavailable.
fn now_ns(start: Instant) -> u128 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| start.elapsed().as_nanos())
}

fn median_us(mut f: impl FnMut()) -> f64 {
    let t0 = Instant::now();
    // Calibrate: batches of about 50 ms, so the scheduler's accounting (updated at ticks) is
    // fine-grained enough.
    let probe = Instant::now();
    for _ in 0..20 {
        f();
    }
    let per = probe.elapsed().as_secs_f64() / 20.0;
    let batch = ((0.05 / per.max(1e-9)) as u32).clamp(20, 200_000);
    let mut samples: Vec<f64> = (0..15)
        .map(|_| {
            let a = now_ns(t0);
            for _ in 0..batch {
                f();
            }
            (now_ns(t0) - a) as f64 / f64::from(batch) / 1000.0
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

#[test]
#[ignore = "timing: run in release with --ignored --nocapture"]
fn plan_and_emit_timing() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/spec-kernels/case_script_example.py");
    let source = std::fs::read_to_string(&path).unwrap();
    let case = parse_case(&source, "case_script_example.py").unwrap();
    let options = CodegenOptions::default();
    let types = infer(&case).unwrap();
    let p = plan(&case, &types).unwrap();
    let module = lower(&case, &types, &p, &options).unwrap();
    let rows = [
        (
            "infer (types)",
            median_us(|| drop(black_box(infer(black_box(&case)).unwrap()))),
        ),
        (
            "plan",
            median_us(|| drop(black_box(plan(black_box(&case), &types).unwrap()))),
        ),
        (
            "lower",
            median_us(|| drop(black_box(lower(&case, &types, &p, &options).unwrap()))),
        ),
        (
            "print",
            median_us(|| drop(black_box(print_module(black_box(&module))))),
        ),
        (
            "plan + emit (plan, lower, print)",
            median_us(|| {
                let p = plan(&case, &types).unwrap();
                let m = lower(&case, &types, &p, &options).unwrap();
                drop(black_box(print_module(&m)));
            }),
        ),
        (
            "infer + plan + emit",
            median_us(|| {
                let t = infer(&case).unwrap();
                let p = plan(&case, &t).unwrap();
                let m = lower(&case, &t, &p, &options).unwrap();
                drop(black_box(print_module(&m)));
            }),
        ),
        (
            "compile (validate, infer, plan, emit)",
            median_us(|| drop(black_box(compile(&case, &options)))),
        ),
    ];
    println!(
        "{:<40} {:>12}",
        "stage (case_script_example.py)", "median µs"
    );
    for (name, us) in rows {
        println!("{name:<40} {us:>12.1}");
    }
}
