//! Plan + emit for a typical case (`corpus/spec-kernels/case_script_example.py`): the budget is
//! a median of at most 100 µs on one core. Benchmarks each stage and the whole `compile`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use lang::frontend::parse_case;
use lang::ir::types::infer;
use lang::pallas::print_module;
use pallas_diff_compiler::compile::{CodegenOptions, compile};
use pallas_diff_compiler::lower::lower;
use pallas_diff_compiler::plan::plan;
use std::hint::black_box;
use std::path::Path;

// The allocator the `pallas-diff` binary uses: with glibc, malloc/free are over a third of
// `lower`'s samples (perf, 2026-11-30), which the product does not pay.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn bench(c: &mut Criterion) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/spec-kernels/case_script_example.py");
    let source = std::fs::read_to_string(&path).expect("read the example case");
    let case = parse_case(&source, &path.display().to_string()).expect("parse the example case");
    let options = CodegenOptions::default();
    let types = infer(&case).expect("types");
    let p = plan(&case, &types).expect("plan");
    let module = lower(&case, &types, &p, &options).expect("lower");

    c.bench_function("plan + emit (infer, plan, lower, print)", |b| {
        b.iter(|| {
            let types = infer(black_box(&case)).unwrap();
            let p = plan(&case, &types).unwrap();
            let m = lower(&case, &types, &p, &options).unwrap();
            black_box(print_module(&m))
        })
    });
    c.bench_function("compile (validate + plan + emit)", |b| {
        b.iter(|| black_box(compile(black_box(&case), &options)))
    });
    c.bench_function("infer (types)", |b| {
        b.iter(|| black_box(infer(black_box(&case)).unwrap()))
    });
    c.bench_function("plan + emit given types (plan, lower, print)", |b| {
        b.iter(|| {
            let p = plan(black_box(&case), &types).unwrap();
            let m = lower(&case, &types, &p, &options).unwrap();
            black_box(print_module(&m))
        })
    });
    c.bench_function("plan", |b| {
        b.iter(|| black_box(plan(black_box(&case), &types).unwrap()))
    });
    c.bench_function("lower", |b| {
        b.iter(|| black_box(lower(black_box(&case), &types, &p, &options).unwrap()))
    });
    c.bench_function("print", |b| {
        b.iter(|| black_box(print_module(black_box(&module))))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
