//! Speed of the reference on a typical generated case: the case-script example kernel (three
//! nested loops, tile and tail runs, bf16 → f32 sums) on a 16×2×128 bf16 input.
//!
//! `run` is the harness's hot path (a plan compiled once, run per input set); `evaluate`
//! includes compiling the plan (input generation, name resolution, block sizes).
//! Target: ≤ 50 µs median per `run` on one core.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use pallas_diff_oracle::{Plan, evaluate};
use std::hint::black_box;

const CASE: &str = r#"
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[4, 2], pallas_loop_type="fori_loop"),
)
def tail_runs(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
            if live >= 3:
                acc = acc + x_block[live - 3 : live, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


torch.manual_seed(0)
x = torch.randn(16, 2, 128, dtype=torch.bfloat16)
tail_runs(x)
"#;

fn bench(c: &mut Criterion) {
    let case = lang::frontend::parse_case(CASE, "bench.py").expect("bench case parses");
    let plan = Plan::compile(&case).expect("bench case compiles");
    plan.run().expect("bench case evaluates");
    c.bench_function(
        "run (plan compiled once), 16x2x128 bf16, 3 nested loops",
        |b| b.iter(|| black_box(plan.run().expect("evaluates"))),
    );
    c.bench_function("evaluate (compile + run)", |b| {
        b.iter(|| black_box(evaluate(black_box(&case)).expect("evaluates")))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
