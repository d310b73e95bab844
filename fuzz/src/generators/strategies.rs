//! proptest adapters over the one generator: byte vectors mapped through
//! [`super::generate`], so proptest's shrinking of the bytes shrinks the case (fewer bytes
//! make `Unstructured` fall back to its smallest choices).

use super::{GenConfig, generate, generate_from_seed};
use arbitrary::{Arbitrary, Unstructured};
use lang::ir::Case;
use proptest::prelude::*;

/// Cases generated under `cfg` from arbitrary bytes.
pub fn cases(cfg: GenConfig) -> impl Strategy<Value = Case> {
    proptest::collection::vec(any::<u8>(), 64..2048)
        .prop_filter_map("the generator ran out of choices", move |bytes| {
            generate(&mut Unstructured::new(&bytes), &cfg).ok()
        })
}

/// Swarm testing: each input draws its own [`GenConfig`] (`impl Arbitrary`) and then a case.
pub fn swarm_cases() -> impl Strategy<Value = (GenConfig, Case)> {
    proptest::collection::vec(any::<u8>(), 128..2048).prop_filter_map(
        "the generator ran out of choices",
        |bytes| {
            let mut u = Unstructured::new(&bytes);
            let cfg = GenConfig::arbitrary(&mut u).ok()?;
            let case = generate(&mut u, &cfg).ok()?;
            Some((cfg, case))
        },
    )
}

/// Cases from seeds, as the campaign driver makes them ([`generate_from_seed`]).
pub fn seeded_cases(cfg: GenConfig) -> impl Strategy<Value = (u64, Case)> {
    any::<u64>().prop_map(move |seed| (seed, generate_from_seed(seed, &cfg)))
}
