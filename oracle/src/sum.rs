//! `.sum(dim)`: the one reduction of case scripts, in NumPy's exact summation order.
//!
//! Floating-point sums are not associative, so the reference fixes an order, NumPy's (checked
//! bit for bit against NumPy by `tests/numpy_fixtures`):
//!
//! * **Reducing the innermost non-trivial dimension** (every dimension after `dim` has size 1):
//!   NumPy's pairwise summation per output element, `0 + pairwise(a[0..n])`, where
//!   `pairwise` sums fewer than 8 elements left to right; up to 128 elements with eight
//!   interleaved accumulators `r[j] = a[j] + a[j+8] + …` combined as
//!   `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))` and the `n % 8` tail added left to right; longer runs
//!   split at `n/2` rounded down to a multiple of 8 and recursed.
//! * **Reducing any other dimension**: sequential accumulation per output element,
//!   `((0 + a[0]) + a[1]) + …` (NumPy's inner loop then runs over the kept dimensions).
//!
//! Every addition is a float32 addition (bfloat16 inputs are accumulated in float32, as torch
//! does, and the result is rounded to bfloat16 once). Values are summed in the logical
//! row-major order of the value, as if it were contiguous (the reference materializes permuted
//! values). Torch's CPU kernels use a vectorized cascade instead; for the shapes of case scripts
//! (reductions over fewer than 16 rows of a non-innermost dim) torch's order is also sequential,
//! and for innermost reductions the two orders may differ in the last bit of float32.
//!
//! Integer sums are exact and have type int64, as in torch.

use crate::ty::Ty;
use ndarray::ArrayD;

/// NumPy's `pairwise_sum` in float32 arithmetic over `a[0], a[stride], …` (n elements).
fn pairwise(a: &[f64], n: usize, stride: usize) -> f32 {
    let at = |i: usize| a[i * stride] as f32;
    if n < 8 {
        let mut res = 0.0f32;
        for i in 0..n {
            res += at(i);
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f32; 8];
        for (j, rj) in r.iter_mut().enumerate() {
            *rj = at(j);
        }
        let mut i = 8;
        while i < n - (n % 8) {
            for (j, rj) in r.iter_mut().enumerate() {
                *rj += at(i + j);
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += at(i);
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise(a, n2, stride) + pairwise(&a[n2 * stride..], n - n2, stride)
    }
}

/// Adds the rows of every `(n, inner)` plane of `x` (`outer × n × inner`, row-major, as a
/// slice) into the matching row of `out` (`outer × inner`) in order, `add(acc, value)`:
/// sequential accumulation per output element, one contiguous row at a time (`n` and
/// `inner` non-zero).
fn accumulate(out: &mut [f64], x: &[f64], n: usize, inner: usize, add: impl Fn(f64, f64) -> f64) {
    for (acc, plane) in out.chunks_exact_mut(inner).zip(x.chunks_exact(n * inner)) {
        for row in plane.chunks_exact(inner) {
            for (a, &v) in acc.iter_mut().zip(row) {
                *a = add(*a, v);
            }
        }
    }
}

/// Sums `data` over `dim`; returns the result type and values (`data`'s shape without `dim`,
/// standard layout). The value is seen as `(outer, n, inner)`, `n` the reduced dim, on its
/// row-major slice: one pairwise sum per contiguous row when `inner == 1`, otherwise a
/// sequential accumulation ([`accumulate`]). The order is this module's, so the walk is over
/// slices, not ndarray's views: with `ArrayView3`, `outer_iter`, `zip_mut_with` and a
/// fixed-rank result this function's hot code was twice its size, and the reference's hot
/// code no longer fit the instruction cache (callgrind `--cache-sim=yes`, 2026-12-05).
pub(crate) fn sum_dim(ty: Ty, data: &ArrayD<f64>, dim: usize) -> (Ty, ArrayD<f64>) {
    let shape = data.shape();
    let outer: usize = shape[..dim].iter().product();
    let n = shape[dim];
    let inner: usize = shape[dim + 1..].iter().product();
    let mut out_shape = shape.to_vec();
    out_shape.remove(dim);
    let values = data
        .as_slice()
        .expect("a device value is in standard layout");
    let mut out = vec![0.0f64; outer * inner];
    let empty = out.is_empty() || n == 0;
    let ty = match ty {
        Ty::I32 | Ty::I64 | Ty::Bool => {
            if !empty {
                accumulate(&mut out, values, n, inner, |a, v| a + v);
            }
            Ty::I64
        }
        Ty::F32 | Ty::Bf16 => {
            if !empty && inner == 1 {
                for (o, row) in out.iter_mut().zip(values.chunks_exact(n)) {
                    *o = f64::from(0.0f32 + pairwise(row, n, 1));
                }
            } else if !empty {
                accumulate(&mut out, values, n, inner, |a, v| {
                    f64::from(a as f32 + v as f32)
                });
            }
            if ty == Ty::Bf16 {
                out.iter_mut().for_each(|v| *v = crate::ty::rbf(*v));
            }
            ty
        }
    };
    (ty, crate::dense::from_shape_vec(&out_shape, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::IxDyn;

    fn arr(shape: &[usize], v: Vec<f64>) -> ArrayD<f64> {
        ArrayD::from_shape_vec(IxDyn(shape), v).expect("values fill the shape")
    }

    #[test]
    fn pairwise_differs_from_sequential_where_numpy_does() {
        // 1e8 then many ones: sequential f32 loses every one, pairwise keeps some.
        let mut v = vec![1e8f64];
        v.extend(std::iter::repeat_n(1.0, 15));
        let (_, seq) = sum_dim(Ty::F32, &arr(&[16, 1], v.clone()), 0);
        assert_eq!(seq[[0]], 1e8 + 8.0, "inner == 1 is pairwise");
        let v2: Vec<f64> = v.iter().flat_map(|&x| [x, x]).collect();
        let (_, seq2) = sum_dim(Ty::F32, &arr(&[16, 2], v2), 0);
        assert_eq!(
            seq2.into_raw_vec_and_offset().0,
            vec![1e8, 1e8],
            "a non-innermost dim sums sequentially"
        );
    }

    #[test]
    fn integer_sums_are_exact_int64() {
        let (ty, v) = sum_dim(Ty::I32, &arr(&[2, 2], vec![2147483647.0, 1.0, 1.0, 2.0]), 0);
        assert_eq!(ty, Ty::I64);
        assert_eq!(v.into_raw_vec_and_offset().0, vec![2147483648.0, 3.0]);
    }

    #[test]
    fn negative_zero_sums_to_positive_zero() {
        let (_, v) = sum_dim(Ty::F32, &arr(&[2], vec![-0.0, -0.0]), 0);
        assert!(v[[]] == 0.0 && v[[]].is_sign_positive());
        let (_, v) = sum_dim(Ty::F32, &arr(&[2, 2], vec![-0.0; 4]), 0);
        assert!(v.iter().all(|x| x.is_sign_positive()));
    }
}
