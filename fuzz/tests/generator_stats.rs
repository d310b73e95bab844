//! Shares over 10,000 seeds: how many generated cases the eager reference refuses as invalid
//! (target: under 10%), how many Helion refuses at trace time, how many the planner rejects,
//! and how many the planner accepts; with the most frequent rules. "Planned" counts trace-time
//! validation and the resident-Ref planner (`validate`, `plan_case`); codegen-time refusals
//! (`config.unroll-dynamic-bounds`) are not counted. Ignored by default (about a minute in a
//! debug build): `cargo test -p pallas-diff-fuzz --test generator_stats -- --ignored --nocapture`.

use lang::ir::Case;
use pallas_diff_fuzz::generators::{GenConfig, generate_from_seed};
use std::collections::BTreeMap;

#[derive(Default)]
struct Shares {
    total: usize,
    invalid: BTreeMap<String, usize>,
    trace: BTreeMap<String, usize>,
    plan: BTreeMap<String, usize>,
    lowered: usize,
}

impl Shares {
    fn add(&mut self, case: &Case) {
        self.total += 1;
        if let Err(e) = oracle::evaluate(case) {
            *self.invalid.entry(e.kind.id().to_string()).or_default() += 1;
        }
        if let Some(r) = compiler::validate::validate(case) {
            *self.trace.entry(r.rule.id().to_string()).or_default() += 1;
            return;
        }
        match compiler::plan::plan_case(case) {
            Ok(_) => self.lowered += 1,
            Err(r) => *self.plan.entry(r.rule.id().to_string()).or_default() += 1,
        }
    }

    fn print(&self, label: &str) {
        let pct = |n: usize| 100.0 * n as f64 / self.total as f64;
        let sum = |m: &BTreeMap<String, usize>| m.values().sum::<usize>();
        let top = |m: &BTreeMap<String, usize>| {
            let mut v: Vec<_> = m.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1));
            v.into_iter()
                .take(8)
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        eprintln!("{label}: {} cases", self.total);
        eprintln!(
            "  invalid (reference refuses): {:5.1}%  {}",
            pct(sum(&self.invalid)),
            top(&self.invalid)
        );
        eprintln!(
            "  rejected at trace time:      {:5.1}%  {}",
            pct(sum(&self.trace)),
            top(&self.trace)
        );
        eprintln!(
            "  rejected by the planner:     {:5.1}%  {}",
            pct(sum(&self.plan)),
            top(&self.plan)
        );
        eprintln!("  planned:                     {:5.1}%", pct(self.lowered));
    }
}

#[test]
#[ignore = "statistics over 10,000 seeds; run with --ignored --nocapture"]
fn shares_over_ten_thousand_seeds() {
    let cfg = GenConfig::default();
    let mut shares = Shares::default();
    for seed in 0..10_000 {
        shares.add(&generate_from_seed(seed, &cfg));
    }
    shares.print("default config");
    let invalid: usize = shares.invalid.values().sum();
    assert!(
        invalid * 10 < shares.total,
        "{invalid} of {} cases are invalid",
        shares.total
    );

    let mut swarm = Shares::default();
    let mut bytes = vec![0u8; 1024];
    for seed in 0..10_000 {
        use arbitrary::{Arbitrary, Unstructured};
        use rand::{RngCore, SeedableRng};
        rand::rngs::SmallRng::seed_from_u64(seed).fill_bytes(&mut bytes);
        let mut u = Unstructured::new(&bytes);
        let cfg = GenConfig::arbitrary(&mut u).unwrap();
        swarm.add(&pallas_diff_fuzz::generators::generate(&mut u, &cfg).unwrap());
    }
    swarm.print("swarm configs");
    let invalid: usize = swarm.invalid.values().sum();
    assert!(
        invalid * 10 < swarm.total,
        "{invalid} of {} swarm cases are invalid",
        swarm.total
    );
}
