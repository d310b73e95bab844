//! `lax.dot_general` of two float matrices (or two batches of them), as Helion's Pallas
//! backend emits a matrix product: the last dim of `lhs` contracted with the second-to-last
//! of `rhs`, a leading batch dim shared when batched.
//!
//! Summation order. Each output element is accumulated in float32 from `k = 0` up with one
//! fused multiply-add per term (`f32::mul_add`, one rounding per step), the order XLA:CPU's
//! Eigen GEMM uses for float32 factors. Measured with jax/jaxlib 0.10.2 under
//! `--xla_cpu_max_isa=AVX2`, inside a `pallas_call` with the TPU interpreter, on random
//! normal factors: bit-exact for every shape with a single row (`1 x K x N`) or at least
//! 17 columns (`8 x {8,32,128} x {32,48,64,96,128}`, `64 x 64 x 64`). XLA:CPU takes other
//! orders that this executor does not reproduce: with 2 to 16 columns and `K` a multiple of 4
//! it keeps four partial sums (`k % 4`) added as `(p0 + p1) + (p2 + p3)` (bit-exact on
//! `{2,4,8,128} x {8,32} x {2,4,8,16}`), and `K` of 6, 7 or 13 and single-column products
//! follow neither; bfloat16 factors with a float32 result differ from both in a few
//! elements per hundred. The differences are a few ulps of the terms, within the float32
//! tolerance of the one comparison (`fuzz::compare`), which scales with the terms' magnitude
//! (the reference sums each dot product in f64 and reports the sum of its terms' magnitudes);
//! the pallas-sim-against-JAX tests judge a module with a dot by that tolerance, not bit for
//! bit.
//!
//! Dtypes: both factors float32, or both bfloat16 (exact in float32, so the products are
//! exact); the result is float32 with `preferred_element_type=jnp.float32` or float32
//! factors. Anything else (integer factors, two dtypes, a bfloat16 result) is
//! [`ErrorKind::Unsupported`]: Helion emits it only for integer matmuls, which the codegen
//! does not lower.

use super::trace_err;
use crate::error::{ErrorKind, SimResult};
use crate::value::{Arr, Cat, Shape, pool_vec};

/// `lax.dot_general(a, b, ...)` with the dimension numbers of a matrix product (`batched`:
/// rank-3 operands sharing dim 0) and `preferred_element_type=jnp.float32` when
/// `preferred_f32`.
pub(crate) fn dot_general(a: &Arr, b: &Arr, batched: bool, preferred_f32: bool) -> SimResult<Arr> {
    let float = |c: Cat| matches!(c, Cat::F32 | Cat::WeakFloat | Cat::Bf16);
    let same = matches!(
        (a.cat, b.cat),
        (Cat::F32 | Cat::WeakFloat, Cat::F32 | Cat::WeakFloat) | (Cat::Bf16, Cat::Bf16)
    );
    if !float(a.cat) || !float(b.cat) || !same || (a.cat == Cat::Bf16 && !preferred_f32) {
        return Err(trace_err(
            ErrorKind::Unsupported,
            format!(
                "lax.dot_general of {} and {} factors{}",
                a.cat.name(),
                b.cat.name(),
                if preferred_f32 {
                    " with a float32 result"
                } else {
                    ""
                }
            ),
        ));
    }
    let rank = if batched { 3 } else { 2 };
    let (da, db) = (a.shape.dims(), b.shape.dims());
    if da.len() != rank || db.len() != rank {
        return Err(trace_err(
            ErrorKind::TypeError,
            format!(
                "dot_general requires rank-{rank} operands for these dimension numbers, got \
                 shapes {da:?} and {db:?}"
            ),
        ));
    }
    let (batch, m, k) = if batched {
        (da[0], da[1], da[2])
    } else {
        (1, da[0], da[1])
    };
    let (bb, kb, n) = if batched {
        (db[0], db[1], db[2])
    } else {
        (1, db[0], db[1])
    };
    if batch != bb || k != kb {
        return Err(trace_err(
            ErrorKind::TypeError,
            format!(
                "dot_general requires contracting and batch dimensions to have the same \
                 shape, got shapes {da:?} and {db:?}"
            ),
        ));
    }
    let shape = if batched {
        Shape::new(&[batch, m, n])?
    } else {
        Shape::new(&[m, n])?
    };
    let (Some(va), Some(vb)) = (a.vals(), b.vals()) else {
        return Ok(Arr::traced(Cat::F32, shape));
    };
    let mut out = pool_vec(shape.numel());
    for p in 0..batch {
        let (pa, pb) = (
            &va[p * m * k..(p + 1) * m * k],
            &vb[p * k * n..(p + 1) * k * n],
        );
        for i in 0..m {
            let row = &pa[i * k..(i + 1) * k];
            for j in 0..n {
                let mut acc = 0.0f32;
                for (kk, &x) in row.iter().enumerate() {
                    // Factors are exact in f32 (f32 or bf16 values).
                    acc = (x as f32).mul_add(pb[kk * n + j] as f32, acc);
                }
                out.push(f64::from(acc));
            }
        }
    }
    Ok(Arr::new(Cat::F32, shape, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(cat: Cat, dims: &[usize], vals: &[f64]) -> Arr {
        Arr::new(cat, Shape::new(dims).unwrap(), vals.to_vec())
    }

    #[test]
    fn contracts_the_last_dim_with_the_second_to_last() {
        let a = arr(Cat::F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b = arr(Cat::F32, &[3, 2], &[1.0, 0.0, 0.0, 1.0, 2.0, -1.0]);
        let c = dot_general(&a, &b, false, false).unwrap();
        assert_eq!(c.shape.dims(), &[2, 2]);
        assert_eq!(c.vals().unwrap(), &[7.0, -1.0, 16.0, -1.0]);
    }

    #[test]
    fn batches_share_the_leading_dim() {
        let a = arr(Cat::Bf16, &[2, 1, 2], &[1.0, 2.0, 3.0, 4.0]);
        let b = arr(Cat::Bf16, &[2, 2, 1], &[1.0, 1.0, 2.0, 0.5]);
        let c = dot_general(&a, &b, true, true).unwrap();
        assert_eq!(c.cat, Cat::F32);
        assert_eq!(c.shape.dims(), &[2, 1, 1]);
        assert_eq!(c.vals().unwrap(), &[3.0, 8.0]);
    }

    #[test]
    fn accumulates_in_float32_with_one_rounding_per_term_from_k_zero() {
        // 2^24 + 1 is not a float32: the 1 is lost when added to 2^24 first, kept when the
        // small terms meet first. In order from k = 0: ((2^24 + 1) + 1) = 2^24 twice over;
        // the FMA rounds after each term, so the result is 2^24, not 2^24 + 2.
        let big = 16_777_216.0;
        let a = arr(Cat::F32, &[1, 3], &[big, 1.0, 1.0]);
        let b = arr(Cat::F32, &[3, 1], &[1.0, 1.0, 1.0]);
        assert_eq!(
            dot_general(&a, &b, false, false).unwrap().vals().unwrap(),
            &[big]
        );
        let a = arr(Cat::F32, &[1, 3], &[1.0, 1.0, big]);
        assert_eq!(
            dot_general(&a, &b, false, false).unwrap().vals().unwrap(),
            &[big + 2.0]
        );
    }

    #[test]
    fn refuses_what_it_does_not_model() {
        let i = arr(Cat::I32, &[1, 1], &[1.0]);
        let f = arr(Cat::F32, &[1, 1], &[1.0]);
        let h = arr(Cat::Bf16, &[1, 1], &[1.0]);
        for (a, b, pref) in [(&i, &i, false), (&f, &h, true), (&h, &h, false)] {
            let e = dot_general(a, b, false, pref).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Unsupported, "{e:?}");
        }
        let e = dot_general(&f, &arr(Cat::F32, &[2, 1], &[1.0, 1.0]), false, false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TypeError);
    }
}
