//! How often the default generator reaches each injected fault ([`compiler::faults`]): over N
//! campaign seeds, the share of cases the fault reaches (*reached*: the faulty compile lowers
//! it, to other code than the clean one) and the share the in-process engines detect
//! (*detected*: a finding with the fault, none without it — the hunt's criterion). A fault that
//! is reached but rarely detected points at a generator gap (the kernels make its wrong code
//! invisible); one rarely reached points at a form the generator seldom draws. For each fault
//! it also lists the clean rejections the fault only moves to another rule.
//!
//! Ignored by default (seconds per thousand seeds in a release build):
//! `cargo test --release -p pallas-diff-fuzz --test generator_reach -- --ignored --nocapture`;
//! `REACH_SEEDS=20000` sets the seed count, `REACH_FAULTS=d8,issue-2006` the faults,
//! `REACH_SHOW=3` prints that many reached but undetected cases.

use compiler::compile::{CodegenOptions, Compiled, Refused, compile};
use compiler::faults::{Fault, FaultSet};
use pallas_diff_fuzz::campaign::case_seed;
use pallas_diff_fuzz::check::check_case;
use pallas_diff_fuzz::engines;
use pallas_diff_fuzz::generators::{GenConfig, generate_from_seed};

/// Whether the faulty compile lowers `case` to other code than the clean one (a fault that only
/// moves a rejection to another rule is not reached: no wrong code runs).
fn lowers_differently(clean: &Compiled, faulty: &Compiled) -> bool {
    match (&clean, &faulty) {
        (Compiled::Lowered(_), Compiled::Lowered(_)) => clean.source() != faulty.source(),
        (_, Compiled::Lowered(_)) => true,
        (_, Compiled::Rejected(_) | Compiled::Gap(_)) => false,
    }
}

#[test]
#[ignore = "statistics; run with --release -- --ignored --nocapture"]
fn fault_reach_and_detection() {
    let n: u64 = std::env::var("REACH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    let faults = std::env::var("REACH_FAULTS")
        .ok()
        .map(|s| FaultSet::parse(&s).expect("REACH_FAULTS names faults"))
        .unwrap_or_else(|| FaultSet::parse("all").expect("all"));
    let show: usize = std::env::var("REACH_SHOW")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let cfg = GenConfig::default();
    let engines = engines::build(&engines::IN_PROCESS, None).expect("in-process engines");
    let clean = CodegenOptions::default();
    let cases: Vec<_> = (0..n)
        .map(|i| generate_from_seed(case_seed(7, i), &cfg))
        .collect();
    eprintln!("{n} cases");
    for fault in faults.iter() {
        let faulty = CodegenOptions {
            faults: FaultSet::only(fault),
            ..CodegenOptions::default()
        };
        let (mut reached, mut detected) = (0usize, 0usize);
        let mut moved = std::collections::BTreeMap::<String, usize>::new();
        let mut shown = 0;
        for case in &cases {
            let (c, f) = (compile(case, &clean), compile(case, &faulty));
            if let (
                Compiled::Rejected(Refused { rejection: x, .. }),
                Compiled::Rejected(Refused { rejection: y, .. }),
            ) = (&c, &f)
                && x.rule != y.rule
            {
                *moved
                    .entry(format!("{} -> {}", x.rule.id(), y.rule.id()))
                    .or_default() += 1;
            }
            if !lowers_differently(&c, &f) {
                continue;
            }
            reached += 1;
            if check_case(case, &engines, &faulty).outcome.is_finding()
                && !check_case(case, &engines, &clean).outcome.is_finding()
            {
                detected += 1;
            } else if shown < show {
                shown += 1;
                eprintln!(
                    "--- reached, not detected:\n{}",
                    lang::render::render_case(case)
                );
            }
        }
        for (k, v) in &moved {
            eprintln!("  rejection moved: {k}: {v}");
        }
        eprintln!(
            "{:<34} reached {:6.3}%  detected {:6.3}%  (1 in {})",
            Fault::name(fault),
            100.0 * reached as f64 / n as f64,
            100.0 * detected as f64 / n as f64,
            (n as usize)
                .checked_div(detected)
                .map_or("-".to_string(), |k| k.to_string())
        );
    }
}
