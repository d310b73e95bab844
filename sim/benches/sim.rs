//! `pallas-sim` speed on the generated set: the first lowered cases of
//! `generate_from_seed(seed, &GenConfig::default())` (the cases `tests/sim_vs_jax.rs` checks),
//! each compiled once, then run through the executor (`Program::new` — name resolution and the
//! trace — plus `Program::run`) repeatedly; prints the median, p90 and mean over cases of each
//! case's fastest run in microseconds (robust to other load), and the same for
//! `oracle::evaluate` for scale.
//!
//! `cargo bench -p pallas-diff-fuzz --bench sim` (`SIM_BENCH_CASES`, default 500).

use compiler::compile::{CodegenOptions, compile};
use fuzz::generators::{GenConfig, generate_from_seed};
use pallas_diff_sim::{Program, SimOptions};
use std::hint::black_box;
use std::time::Instant;

fn stats(name: &str, mut us: Vec<f64>) {
    us.sort_by(f64::total_cmp);
    let n = us.len();
    let mean = us.iter().sum::<f64>() / n as f64;
    println!(
        "{name:<28} median {:>7.1} us   p90 {:>7.1} us   mean {:>7.1} us   max {:>8.1} us",
        us[n / 2],
        us[n * 9 / 10],
        mean,
        us[n - 1]
    );
}

fn main() {
    let n: usize = std::env::var("SIM_BENCH_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    let cfg = GenConfig::default();
    let mut cases = Vec::new();
    let mut seed = 0u64;
    while cases.len() < n {
        let case = generate_from_seed(seed, &cfg);
        seed += 1;
        let c = compile(&case, &CodegenOptions::default());
        let (Some(module), Ok(inputs)) = (c.into_module(), case.kernel_tensor_args()) else {
            continue;
        };
        if oracle::evaluate(&case).is_err() {
            continue;
        }
        cases.push((case, module, inputs));
    }
    let reps = 20;
    let options = SimOptions::default();
    // The fastest of `reps` runs: robust to other load on the machine.
    let best = |f: &mut dyn FnMut()| -> f64 {
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e6
            })
            .fold(f64::INFINITY, f64::min)
    };
    let (mut total, mut new, mut run, mut reference) = (vec![], vec![], vec![], vec![]);
    for (case, module, inputs) in &cases {
        total.push(best(&mut || {
            let p = Program::new(black_box(module));
            black_box(p.and_then(|p| p.run(inputs, &options)).ok());
        }));
        new.push(best(&mut || {
            black_box(Program::new(black_box(module)).ok());
        }));
        if let Ok(p) = Program::new(module) {
            run.push(best(&mut || {
                black_box(p.run(black_box(inputs), &options).ok());
            }));
        }
        reference.push(best(&mut || {
            black_box(oracle::evaluate(black_box(case)).ok());
        }));
    }
    println!(
        "{} lowered generated cases (seeds 0..{seed}), fastest of {reps} runs each:",
        cases.len()
    );
    stats("pallas-sim (new + run)", total);
    stats("  Program::new (trace)", new);
    stats("  Program::run", run);
    stats("oracle::evaluate", reference);
}
