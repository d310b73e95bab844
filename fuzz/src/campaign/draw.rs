//! Which case a campaign checks at index `i`: the generator's case from `case_seed(S, i)`,
//! unless the compiler refuses its kernel and the case is *thinned*, when the case is drawn
//! again from the next seed of the same stream.
//!
//! Why: about 70% of the default generator's cases are kernels the compiler refuses (measured
//! 2026-12-03 over 3,000 cases of `--seed 21`: `chain.consumed-whole` alone 19.5%, then
//! `root.written-on-device`, `selector.loop-not-covering` at ~6% each, and 30 more rules). A
//! refused case tests one verdict; a lowered one tests the verdict, the emitted code and its
//! values, and is what JAX and Helion's code generation get to see. Every refusal rule stays
//! in at the rate [`GenConfig::refused_keep_percent`] keeps (20% by default: the lowered share
//! goes from ~30% to ~68%), uniformly, so each rule keeps its share of the refusals and a rule
//! the generator reaches stays reached.
//!
//! The verdict is the campaign's own compile (under its codegen options, injected faults
//! included): the case a thinned draw leads to is compiled once, and the compile is the one the
//! check uses. A compiler crash is never thinned (it is a finding), nor a case the codegen
//! models as a gap (`unsupported`: Helion lowers it).

use super::case_seed;
use crate::check::{Depth, PreparedCase};
use crate::generators::seeded::{Seeds, draw_seeded};
use crate::generators::{GenConfig, generate_from_seed};
use compiler::compile::{CodegenOptions, Compiled};
use rand::{RngCore, SeedableRng, rngs::SmallRng};

/// Draws a case may take: its last draw is kept whatever its verdict. At the default 20% and
/// ~70% of draws refused, 16 draws that are all thinned happen about once in 10,000 cases
/// ((0.7 × 0.8)^16 ≈ 1e-4), so the cap bounds a case's cost without moving the rates.
pub const MAX_DRAWS: u64 = 16;

/// The stream index a draw's keep decision is hashed from (distinct from every draw's own
/// seed derivation, which uses indices `1..MAX_DRAWS`).
const KEEP_STREAM: u64 = u64::MAX;

/// The stream index a draw's seeded-or-grammar decision is hashed from.
const SEEDED_STREAM: u64 = u64::MAX - 1;

/// Bytes a seeded draw takes: the seed's pick and up to [`crate::generators::seeded::TRIES`]
/// mutants of at most 3 mutations, each a few bytes.
const SEEDED_BYTES: usize = 256;

/// One case as a campaign checks it.
pub struct Drawn {
    /// The seed the case was generated from (`generate_from_seed(seed, cfg)` gives it again):
    /// `case_seed(S, i)` for a first draw, a later one of that stream after thinning.
    pub seed: u64,
    /// The case, compiled.
    pub prepared: PreparedCase<'static>,
    /// Refused draws of this index that were thinned before it.
    pub thinned: u64,
    /// The seed kernel the case is a mutant of (`None`: the grammar's own case).
    pub origin: Option<String>,
}

/// Whether the draw from `seed` is a mutant of a seed (a deterministic draw of
/// [`GenConfig::seed_percent`] in 100 when there are seeds).
pub fn is_seeded(seed: u64, generator: &GenConfig, seeds: Option<&Seeds>) -> bool {
    seeds.is_some_and(|s| !s.is_empty())
        && case_seed(seed, SEEDED_STREAM) % 100 < u64::from(generator.seed_percent)
}

/// The case drawn from `seed`: a seed's mutant ([`is_seeded`]) with its seed's name, or the
/// grammar's case. Deterministic for a given seed, config and seed set.
pub fn case_from(
    seed: u64,
    generator: &GenConfig,
    seeds: Option<&Seeds>,
) -> (lang::ir::Case, Option<String>) {
    if let Some(seeds) = seeds
        && is_seeded(seed, generator, Some(seeds))
    {
        let mut bytes = [0u8; SEEDED_BYTES];
        SmallRng::seed_from_u64(seed).fill_bytes(&mut bytes);
        if let Some((i, case)) = draw_seeded(seeds, &bytes, generator) {
            return (case, Some(seeds.seeds[i].name.clone()));
        }
    }
    (generate_from_seed(seed, generator), None)
}

/// The seed of draw `attempt` (0-based) of a case whose first seed is `first`.
pub fn draw_seed(first: u64, attempt: u64) -> u64 {
    if attempt == 0 {
        first
    } else {
        case_seed(first, attempt)
    }
}

/// Whether a refused case generated from `seed` stays (a deterministic draw of
/// `keep_percent` in 100).
pub fn keeps_refused(seed: u64, keep_percent: u8) -> bool {
    case_seed(seed, KEEP_STREAM) % 100 < u64::from(keep_percent)
}

/// Whether a compile is a refusal that thinning may draw again.
fn thinnable(prepared: &PreparedCase<'_>) -> bool {
    match prepared.compiled() {
        Ok(Compiled::Rejected(_)) => true,
        Ok(Compiled::Lowered(_) | Compiled::Gap(_)) | Err(_) => false,
    }
}

/// Case `index` of a campaign seeded `seed`: drawn, compiled under `codegen`, and thinned as
/// the module docs say.
pub fn draw(
    seed: u64,
    index: u64,
    generator: &GenConfig,
    codegen: &CodegenOptions,
    depth: Depth,
    seeds: Option<&Seeds>,
) -> Drawn {
    let first = case_seed(seed, index);
    let mut attempt = 0;
    loop {
        let s = draw_seed(first, attempt);
        let (case, origin) = case_from(s, generator, seeds);
        let prepared = PreparedCase::owned(depth, case, codegen);
        let last = attempt + 1 >= MAX_DRAWS;
        if last || !thinnable(&prepared) || keeps_refused(s, generator.refused_keep_percent) {
            return Drawn {
                seed: s,
                prepared,
                thinned: attempt,
                origin,
            };
        }
        attempt += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(keep: u8) -> GenConfig {
        GenConfig {
            refused_keep_percent: keep,
            ..GenConfig::default()
        }
    }

    fn refused(d: &Drawn) -> bool {
        thinnable(&d.prepared)
    }

    #[test]
    fn keeping_every_refusal_is_the_generators_own_stream() {
        let options = CodegenOptions::default();
        for i in 0..200 {
            let d = draw(3, i, &cfg(100), &options, Depth::FindingsOnly, None);
            assert_eq!((d.seed, d.thinned), (case_seed(3, i), 0));
            assert_eq!(
                d.prepared.case(),
                &generate_from_seed(case_seed(3, i), &cfg(100))
            );
        }
    }

    #[test]
    fn keeping_no_refusal_leaves_only_lowered_kernels_but_for_the_capped_draws() {
        let options = CodegenOptions::default();
        let (mut kept_refused, mut thinned) = (0, 0);
        for i in 0..300 {
            let d = draw(5, i, &cfg(0), &options, Depth::FindingsOnly, None);
            thinned += d.thinned;
            if refused(&d) {
                assert_eq!(d.thinned, MAX_DRAWS - 1, "a refusal kept before the cap");
                kept_refused += 1;
            }
            // The draw is the generator's case from the seed it records.
            assert_eq!(d.prepared.case(), &generate_from_seed(d.seed, &cfg(0)));
        }
        assert!(
            thinned > 300,
            "the default generator refuses most first draws"
        );
        assert!(kept_refused <= 3, "{kept_refused} of 300 reached the cap");
    }

    #[test]
    fn the_default_keeps_a_fifth_of_the_refusals_and_lowers_most_cases() {
        let options = CodegenOptions::default();
        let (mut lowered, mut kept_refused, mut thinned) = (0u64, 0u64, 0u64);
        let n = 2000;
        for i in 0..n {
            let d = draw(
                7,
                i,
                &GenConfig::default(),
                &options,
                Depth::FindingsOnly,
                None,
            );
            thinned += d.thinned;
            if refused(&d) {
                kept_refused += 1;
            } else {
                lowered += 1;
            }
        }
        // Of the refused draws, those kept over all refused draws: ~20%.
        let share = kept_refused as f64 / (kept_refused + thinned) as f64;
        assert!((0.15..0.25).contains(&share), "kept {share:.3} of refusals");
        assert!(lowered * 2 > n, "only {lowered} of {n} lowered");
    }

    #[test]
    fn keep_decisions_follow_the_percentage() {
        for p in [0u8, 10, 50, 100] {
            let kept = (0..10_000u64).filter(|&s| keeps_refused(s, p)).count();
            let expected = usize::from(p) * 100;
            assert!(kept.abs_diff(expected) <= 250, "{p}%: {kept} of 10,000");
        }
    }
}
