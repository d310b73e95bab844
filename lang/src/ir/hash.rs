//! The one hasher of the workspace, for the maps the compiler keys by [`super::NodeKey`] (an
//! address) and the maps of short names (the IR's scopes, `pallas-sim`'s name resolution).
//!
//! std's SipHash resists hash flooding, which buys nothing for keys the process makes itself,
//! and it was the largest single cost of tracing: in a `perf` profile of the in-process
//! campaign (2026-11-30, 20,000 generated cases) SipHash and hashbrown's `hash_one` were 4.1% of
//! all samples, a fifth of `types::infer`. [`FastHasher`] is the multiply-rotate word hash of
//! rustc's `FxHasher`, with a final rotation so that the low bits hashbrown indexes buckets by
//! are not the always-zero low bits of an aligned address.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A fast, non-cryptographic hasher for addresses and short names (see the module docs).
#[derive(Default, Clone, Copy, Debug)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        // Multiplication carries entropy only upwards; hashbrown takes the bucket from the low
        // bits and the tag from the top 7, so move the well-mixed middle bits down.
        self.0.rotate_left(26)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // The length first, so that zero padding of the last word does not collide ("a", "a\0").
        self.write_usize(bytes.len());
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.write_u64(tail_word(rest));
        }
    }

    fn write_u8(&mut self, x: u8) {
        self.write_u64(u64::from(x));
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// The last 1 to 7 bytes of a key as one little-endian word, zero-padded: two overlapping loads
/// OR-ed together (the overlap holds the same bytes in both), with neither a variable-length
/// copy (a `memcpy` call per short name was 0.3% of a campaign's instructions) nor a loop over
/// the bytes (names are hashed ~100 times per module by `pallas-sim`'s name resolution, where
/// hashing byte by byte was 16% of its time; callgrind, 2,000 cases).
#[inline]
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let u32_at = |k: usize| {
        u64::from(u32::from_le_bytes([
            rest[k],
            rest[k + 1],
            rest[k + 2],
            rest[k + 3],
        ]))
    };
    let u16_at = |k: usize| u64::from(u16::from_le_bytes([rest[k], rest[k + 1]]));
    if n >= 4 {
        u32_at(0) | (u32_at(n - 4) << (8 * (n - 4)))
    } else if n >= 2 {
        u16_at(0) | (u16_at(n - 2) << (8 * (n - 2)))
    } else {
        rest.first().map_or(0, |&b| u64::from(b))
    }
}

/// A hash map with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A hash set with [`FastHasher`].
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn aligned_addresses_spread_over_low_bits() {
        let b = BuildHasherDefault::<FastHasher>::default();
        let buckets: FastSet<u64> = (0..256usize)
            .map(|i| b.hash_one(0x7f00_0000_1000usize + 48 * i) & 255)
            .collect();
        // SipHash-like spread: well over half of 256 buckets hit by 256 keys.
        assert!(buckets.len() > 128, "{} buckets", buckets.len());
    }

    #[test]
    fn a_short_tail_hashes_as_its_zero_padded_little_endian_word() {
        for bytes in [
            &b""[..],
            b"a",
            b"ab",
            b"acc",
            b"acc0",
            b"tile0",
            b"tile_b",
            b"x_block",
            b"x_block0",
            b"x_block_1",
            b"0123456789abcde",
            b"0123456789abcdef0",
        ] {
            let mut h = FastHasher::default();
            h.write(bytes);
            let mut expected = FastHasher::default();
            expected.write_usize(bytes.len());
            for c in bytes.chunks(8) {
                let mut word = [0u8; 8];
                word[..c.len()].copy_from_slice(c);
                expected.write_u64(u64::from_le_bytes(word));
            }
            assert_eq!(h.finish(), expected.finish(), "{bytes:?}");
        }
    }

    #[test]
    fn names_differ() {
        let b = BuildHasherDefault::<FastHasher>::default();
        assert_ne!(b.hash_one("acc"), b.hash_one("acd"));
        assert_ne!(b.hash_one("a"), b.hash_one("a\0"));
    }
}
