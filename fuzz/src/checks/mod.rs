//! Checks: one plain function per property, `run(u: &mut Unstructured) -> arbitrary::Result<()>`,
//! that panics on a violation (a finding, or a harness bug). `cargo fuzz` targets call them in a
//! few lines of glue; each has a seeded smoke test so `cargo test` exercises every fuzzer on
//! stable with no TPU.
//!
//! - [`differential`]: reference vs the in-process Pallas executor on a generated case;
//! - [`frontend_roundtrip`]: render ∘ parse is the identity on generated cases;
//! - [`planner_total`]: the compiler never panics, and every rejection has a rule and a span.

pub mod differential;
pub mod frontend_roundtrip;
pub mod planner_total;

/// Runs `check` on `n` seeded byte buffers (deterministic: seeds 0..n), for smoke tests.
pub fn test_n_times(
    n: u64,
    check: impl Fn(&mut arbitrary::Unstructured<'_>) -> arbitrary::Result<()>,
) {
    use rand::{RngCore, SeedableRng, rngs::SmallRng};
    let mut buf = vec![0u8; 4096];
    for seed in 0..n {
        SmallRng::seed_from_u64(seed).fill_bytes(&mut buf);
        let mut u = arbitrary::Unstructured::new(&buf);
        // An `arbitrary` error means the bytes ran out: not a failure, as in libFuzzer.
        let _ = check(&mut u);
    }
}
