//! Every generated case is admissible: it passes the generator's own validator, and the eager
//! reference refuses few of them (the target is under 10%); swarm configs included.

use arbitrary::{Arbitrary, Unstructured};
use lang::ir::Case;
use pallas_diff_fuzz::generators::{GenConfig, generate, generate_from_seed, validate_admissible};
use rand::{RngCore, SeedableRng, rngs::SmallRng};
use std::collections::BTreeMap;

fn swarm_case(seed: u64) -> Option<(GenConfig, Case)> {
    let mut buf = vec![0u8; 4096];
    SmallRng::seed_from_u64(seed).fill_bytes(&mut buf);
    let mut u = Unstructured::new(&buf);
    let cfg = GenConfig::arbitrary(&mut u).ok()?;
    let case = generate(&mut u, &cfg).ok()?;
    Some((cfg, case))
}

fn report(label: &str, cases: &[Case]) -> (usize, BTreeMap<String, usize>) {
    let mut invalid = 0;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut first: Option<String> = None;
    for case in cases {
        if let Err(e) = oracle::evaluate(case) {
            invalid += 1;
            *kinds.entry(e.kind.id().to_string()).or_default() += 1;
            if first.is_none() {
                first = Some(format!("{e}\n{}", lang::render::render_case(case)));
            }
        }
    }
    eprintln!(
        "{label}: {invalid}/{} refused by the reference: {kinds:?}",
        cases.len()
    );
    if let Some(f) = first.filter(|_| std::env::var("SHOW").is_ok()) {
        eprintln!("first refused case:\n{f}");
    }
    (invalid, kinds)
}

#[test]
fn generated_cases_are_admissible() {
    let cfg = GenConfig::default();
    for seed in 0..1500 {
        let case = generate_from_seed(seed, &cfg);
        if let Err(flaw) = validate_admissible(&case) {
            panic!("seed {seed}: {flaw}\n{}", lang::render::render_case(&case));
        }
    }
}

#[test]
fn swarm_cases_are_admissible() {
    for seed in 0..1500 {
        let Some((cfg, case)) = swarm_case(seed) else {
            continue;
        };
        if let Err(flaw) = validate_admissible(&case) {
            panic!(
                "swarm seed {seed}: {flaw}\n{cfg:?}\n{}",
                lang::render::render_case(&case)
            );
        }
    }
}

#[test]
fn the_reference_refuses_under_ten_percent() {
    let cfg = GenConfig::default();
    let cases: Vec<Case> = (0..1000).map(|s| generate_from_seed(s, &cfg)).collect();
    let (invalid, _) = report("default config", &cases);
    assert!(
        invalid * 10 < cases.len(),
        "{invalid} of {} generated cases are invalid",
        cases.len()
    );
    let swarm: Vec<Case> = (0..1000).filter_map(swarm_case).map(|(_, c)| c).collect();
    let (invalid, _) = report("swarm configs", &swarm);
    assert!(
        invalid * 10 < swarm.len(),
        "{invalid} of {} swarm cases are invalid",
        swarm.len()
    );
}

/// A kernel that writes its tensor arguments and returns nothing (a decode step updating its
/// state cache in place) is an admissible seed: its outputs are what it wrote. One that returns
/// nothing and writes no argument has no outputs, and is not.
#[test]
fn a_kernel_that_writes_its_arguments_and_returns_nothing_is_admissible() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/seeds/real-style/causal_conv1d_state_update.py"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let case = lang::frontend::parse_case(&text, "causal_conv1d_state_update.py").unwrap();
    assert!(!case.kernel.written_params().is_empty());
    pallas_diff_fuzz::generators::validate_admissible(&case).unwrap();
    let unwritten = text
        .replace("        conv_state[tb, 0:2, :] = window[:, 1:3, :]\n", "")
        .replace("        conv_state[tb, 2:3, :] = token\n", "")
        .replace(
            "        x[tb, :, :] = acc.to(x.dtype)\n",
            "        acc = acc\n",
        );
    let case = lang::frontend::parse_case(&unwritten, "unwritten.py").unwrap();
    assert!(case.kernel.written_params().is_empty(), "{unwritten}");
    assert!(pallas_diff_fuzz::generators::validate_admissible(&case).is_err());
}
