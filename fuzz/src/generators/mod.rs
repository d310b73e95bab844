//! Generators of admissible cases, and what goes with them.
//!
//! This module owns the one case generator ([`generate`], written against
//! `arbitrary::Unstructured`, steered by [`GenConfig`]), the validator it is held to
//! ([`validate_admissible`]: is a case admissible?), the repair that makes any mutated case
//! admissible again ([`fixup`](fn@fixup)), coverage tags ([`features`](fn@features)) and
//! proptest adapters ([`strategies`]).
//!
//! Promises:
//! - *Admissible*: every generated case passes [`validate_admissible`]: it renders to a case
//!   script that `parse_case` reads back to the same IR (span-stripped), and the eager reference
//!   can evaluate it (shapes line up, indices are in range on every iteration, nothing reads
//!   uninitialized memory). Forms Helion refuses at trace or plan time are generated on purpose, at the rate
//!   [`GenConfig::wild_percent`] sets.
//! - *Deterministic*: the same bytes and config give the same case, byte for byte;
//!   [`generate_from_seed`] gives the same case for the same seed and config.
//! - *Small*: outputs stay within 16×2×128 elements and loops nest at most three deep, so a case
//!   evaluates in microseconds.

pub mod admissible;
mod config;
mod features;
mod fixup;
mod grammar;
mod make;
pub mod seeded;
mod shape;
pub mod strategies;

pub use admissible::{Flaw, validate_admissible};
pub use config::{GenConfig, GenConfigOverrides};
pub use features::{
    AttrTag, Feature, IndexForm, NOT_GENERATED, OpTag, Surface, ViewKind, features, features_sized,
    index_forms,
};
pub use fixup::fixup;
pub use grammar::generate;

use lang::ir::Case;
use rand::{RngCore, SeedableRng, rngs::SmallRng};

/// Bytes drawn per attempt: a default-config case takes about 70 (at most ~160 measured over
/// 20,000 seeds); the rest is slack for swarm configs with more items, so the generator does not
/// run short and fall back to its smallest choices.
const SEED_BYTES: usize = 1024;

/// The case for `seed` under `cfg`: fills a byte buffer from `SmallRng::seed_from_u64(seed)`
/// and generates from it, retrying with the next seed if the generator gives up. Deterministic
/// for a given seed, config and build target (`SmallRng`'s algorithm is the 64-bit one on
/// 64-bit targets).
pub fn generate_from_seed(seed: u64, cfg: &GenConfig) -> Case {
    let mut buf = vec![0u8; SEED_BYTES];
    for attempt in 0..64u64 {
        let mut rng = SmallRng::seed_from_u64(seed.wrapping_add(attempt));
        rng.fill_bytes(&mut buf);
        if let Ok(case) = generate(&mut arbitrary::Unstructured::new(&buf), cfg) {
            return case;
        }
    }
    panic!("harness bug: the generator failed 64 times in a row from seed {seed}")
}
