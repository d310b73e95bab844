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
use crate::value::{Arr, Cat, MAX_RANK, Shape, pool_vec};

/// The dimension numbers of a `lax.dot_general` (one contracted dim per side) and its result
/// type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DotDims {
    /// The contracted dim of the left and of the right operand.
    pub contract: (usize, usize),
    /// Dim 0 of both operands is a shared batch dim.
    pub batched: bool,
    /// `preferred_element_type=jnp.float32`.
    pub preferred_f32: bool,
}

/// Row-major offsets of every index of `shape`'s dims `keep` (in order), the other dims at 0.
fn offsets(shape: &[usize], strides: &[usize], keep: &[usize]) -> Vec<usize> {
    let mut out = vec![0usize];
    for &d in keep {
        let mut next = Vec::with_capacity(out.len() * shape[d]);
        for &base in &out {
            for i in 0..shape[d] {
                next.push(base + i * strides[d]);
            }
        }
        out = next;
    }
    out
}

/// `lax.dot_general(a, b, ...)` with the dimension numbers `dims` (module docs: order, dtypes).
pub(crate) fn dot_general(a: &Arr, b: &Arr, dims: &DotDims) -> SimResult<Arr> {
    let float = |c: Cat| matches!(c, Cat::F32 | Cat::WeakFloat | Cat::Bf16);
    let same = matches!(
        (a.cat, b.cat),
        (Cat::F32 | Cat::WeakFloat, Cat::F32 | Cat::WeakFloat) | (Cat::Bf16, Cat::Bf16)
    );
    if !float(a.cat) || !float(b.cat) || !same || (a.cat == Cat::Bf16 && !dims.preferred_f32) {
        return Err(trace_err(
            ErrorKind::Unsupported,
            format!(
                "lax.dot_general of {} and {} factors{}",
                a.cat.name(),
                b.cat.name(),
                if dims.preferred_f32 {
                    " with a float32 result"
                } else {
                    ""
                }
            ),
        ));
    }
    let (da, db) = (a.shape.dims(), b.shape.dims());
    let (cl, cr) = dims.contract;
    let first = usize::from(dims.batched);
    let bad = cl >= da.len()
        || cr >= db.len()
        || cl < first
        || cr < first
        || da[cl] != db[cr]
        || (dims.batched && da[0] != db[0]);
    if bad {
        return Err(trace_err(
            ErrorKind::TypeError,
            format!(
                "dot_general requires contracting and batch dimensions to have the same \
                 shape, got shapes {da:?} and {db:?} contracting dims ({cl}, {cr})"
            ),
        ));
    }
    let free_a: Vec<usize> = (first..da.len()).filter(|&d| d != cl).collect();
    let free_b: Vec<usize> = (first..db.len()).filter(|&d| d != cr).collect();
    let mut out_dims = Vec::with_capacity(MAX_RANK);
    if dims.batched {
        out_dims.push(da[0]);
    }
    out_dims.extend(free_a.iter().map(|&d| da[d]));
    out_dims.extend(free_b.iter().map(|&d| db[d]));
    let shape = Shape::new(&out_dims)?;
    let (Some(va), Some(vb)) = (a.vals(), b.vals()) else {
        return Ok(Arr::traced(Cat::F32, shape));
    };
    let (sa, sb) = (a.shape.strides(), b.shape.strides());
    let (oa, ob) = (offsets(da, &sa, &free_a), offsets(db, &sb, &free_b));
    let (batch, k) = (if dims.batched { da[0] } else { 1 }, da[cl]);
    let mut out = pool_vec(shape.numel());
    for p in 0..batch {
        let (pa, pb) = (p * sa[0] * first, p * sb[0] * first);
        for &ia in &oa {
            for &ib in &ob {
                let mut acc = 0.0f32;
                for kk in 0..k {
                    // Factors are exact in f32 (f32 or bf16 values).
                    let x = va[pa + ia + kk * sa[cl]] as f32;
                    acc = x.mul_add(vb[pb + ib + kk * sb[cr]] as f32, acc);
                }
                out.push(f64::from(acc));
            }
        }
    }
    Ok(Arr::new(Cat::F32, shape, out))
}

/// `jax.nn.one_hot(x, n, dtype)`: `x`'s shape with a trailing dim of `n`, 1 where `x`
/// equals the position and 0 elsewhere (`x[..., None] == jnp.arange(n)`: an index outside
/// `0..n` gives zeros).
pub(crate) fn one_hot(x: &Arr, n: i64, cat: Cat) -> SimResult<Arr> {
    if !matches!(x.cat, Cat::I32 | Cat::WeakInt) || n < 0 || !cat.is_float() {
        return Err(trace_err(
            ErrorKind::Unsupported,
            format!(
                "jax.nn.one_hot of {} indices into {}",
                x.cat.name(),
                cat.name()
            ),
        ));
    }
    let n = n as usize;
    let mut dims = x.shape.dims().to_vec();
    dims.push(n);
    let shape = Shape::new(&dims)?;
    let Some(vx) = x.vals() else {
        return Ok(Arr::traced(cat, shape));
    };
    let mut out = pool_vec(shape.numel());
    for &v in vx {
        out.extend((0..n).map(|j| if v == j as f64 { 1.0 } else { 0.0 }));
    }
    Ok(Arr::new(cat, shape, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MM: DotDims = DotDims {
        contract: (1, 0),
        batched: false,
        preferred_f32: false,
    };
    const BMM_F32: DotDims = DotDims {
        contract: (2, 1),
        batched: true,
        preferred_f32: true,
    };

    fn arr(cat: Cat, dims: &[usize], vals: &[f64]) -> Arr {
        Arr::new(cat, Shape::new(dims).unwrap(), vals.to_vec())
    }

    #[test]
    fn contracts_the_last_dim_with_the_second_to_last() {
        let a = arr(Cat::F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b = arr(Cat::F32, &[3, 2], &[1.0, 0.0, 0.0, 1.0, 2.0, -1.0]);
        let c = dot_general(&a, &b, &MM).unwrap();
        assert_eq!(c.shape.dims(), &[2, 2]);
        assert_eq!(c.vals().unwrap(), &[7.0, -1.0, 16.0, -1.0]);
    }

    #[test]
    fn batches_share_the_leading_dim() {
        let a = arr(Cat::Bf16, &[2, 1, 2], &[1.0, 2.0, 3.0, 4.0]);
        let b = arr(Cat::Bf16, &[2, 2, 1], &[1.0, 1.0, 2.0, 0.5]);
        let c = dot_general(&a, &b, &BMM_F32).unwrap();
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
        assert_eq!(dot_general(&a, &b, &MM).unwrap().vals().unwrap(), &[big]);
        let a = arr(Cat::F32, &[1, 3], &[1.0, 1.0, big]);
        assert_eq!(
            dot_general(&a, &b, &MM).unwrap().vals().unwrap(),
            &[big + 2.0]
        );
    }

    #[test]
    fn a_one_hot_gather_contracts_the_one_hot_with_any_dim_of_the_table() {
        // table[i, j] = 10 i + j, 3 x 2; gathered along dim 1 by [1, 0, 1, 5, -1]: the
        // free dims of the one-hot come first, then the table's other dim.
        let idx = arr(Cat::I32, &[5], &[1.0, 0.0, 1.0, 5.0, -1.0]);
        let oh = one_hot(&idx, 2, Cat::F32).unwrap();
        assert_eq!(oh.shape.dims(), &[5, 2]);
        assert_eq!(
            oh.vals().unwrap(),
            &[0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
        );
        let table = arr(Cat::F32, &[3, 2], &[0.0, 1.0, 10.0, 11.0, 20.0, 21.0]);
        let dims = DotDims {
            contract: (1, 1),
            ..MM
        };
        let g = dot_general(&oh, &table, &dims).unwrap();
        assert_eq!(g.shape.dims(), &[5, 3]);
        // Out-of-range indices (5, -1) gather zeros, not an error and not the last row.
        assert_eq!(
            g.vals().unwrap(),
            &[
                1.0, 11.0, 21.0, 0.0, 10.0, 20.0, 1.0, 11.0, 21.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            ]
        );
        // A NaN in a row the index does not select still reaches the result (0 * NaN).
        let table = arr(Cat::F32, &[3, 2], &[0.0, f64::NAN, 10.0, 11.0, 20.0, 21.0]);
        let g = dot_general(&oh, &table, &dims).unwrap();
        assert!(g.vals().unwrap()[0].is_nan() && !g.vals().unwrap()[1].is_nan());
    }

    #[test]
    fn refuses_what_it_does_not_model() {
        let i = arr(Cat::I32, &[1, 1], &[1.0]);
        let f = arr(Cat::F32, &[1, 1], &[1.0]);
        let h = arr(Cat::Bf16, &[1, 1], &[1.0]);
        for (a, b, pref) in [(&i, &i, false), (&f, &h, true), (&h, &h, false)] {
            let dims = DotDims {
                preferred_f32: pref,
                ..MM
            };
            let e = dot_general(a, b, &dims).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Unsupported, "{e:?}");
        }
        let e = dot_general(&f, &arr(Cat::F32, &[2, 1], &[1.0, 1.0]), &MM).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TypeError);
    }
}
