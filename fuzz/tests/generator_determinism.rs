//! The same seed bytes and config give the same case, byte for byte; so does the same seed.

use arbitrary::Unstructured;
use lang::render::render_case;
use pallas_diff_fuzz::generators::{GenConfig, generate, generate_from_seed};
use rand::{RngCore, SeedableRng, rngs::SmallRng};

#[test]
fn same_bytes_same_case() {
    let cfg = GenConfig::default();
    for seed in 0..300 {
        let mut bytes = vec![0u8; 2048];
        SmallRng::seed_from_u64(seed).fill_bytes(&mut bytes);
        let a = generate(&mut Unstructured::new(&bytes), &cfg).unwrap();
        let b = generate(&mut Unstructured::new(&bytes), &cfg).unwrap();
        assert_eq!(a, b, "seed {seed}");
        assert_eq!(render_case(&a), render_case(&b), "seed {seed}");
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
    }
}

#[test]
fn same_seed_same_case_and_seeds_differ() {
    let cfg = GenConfig::default();
    let mut distinct = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let a = render_case(&generate_from_seed(seed, &cfg));
        assert_eq!(
            a,
            render_case(&generate_from_seed(seed, &cfg)),
            "seed {seed}"
        );
        distinct.insert(a);
    }
    assert!(
        distinct.len() > 190,
        "only {} distinct cases from 200 seeds",
        distinct.len()
    );
}

#[test]
fn the_config_steers_the_case() {
    // Same seed, different config: a different case (the config is part of the input).
    let a = generate_from_seed(3, &GenConfig::default());
    let b = generate_from_seed(
        3,
        &GenConfig {
            max_rows: 2,
            ..GenConfig::default()
        },
    );
    assert_ne!(render_case(&a), render_case(&b));
}

#[test]
fn short_input_still_generates() {
    // Unstructured falls back to its smallest choices when bytes run out: still a case.
    for len in [0usize, 1, 7, 64] {
        let bytes = vec![0xA5u8; len];
        let case = generate(&mut Unstructured::new(&bytes), &GenConfig::default()).unwrap();
        pallas_diff_fuzz::generators::validate_admissible(&case).unwrap();
    }
}
