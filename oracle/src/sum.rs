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
use ndarray::{Array2, ArrayD, ArrayView3, Axis};

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

/// Adds the rows of every `(n, inner)` plane of `x` (`outer × n × inner`, standard layout)
/// into the matching row of `out` (`outer × inner`) in order, `add(acc, value)`: sequential
/// accumulation per output element. Each row is added by ndarray's `zip_mut_with` on
/// contiguous one-dimensional views (a slice loop); one `Zip` per reduced row over the
/// strided `(outer, inner)` plane was 3% of the reference's instructions (callgrind, `digest`
/// example, 5,000 cases, 2026-12-05).
fn accumulate(out: &mut Array2<f64>, x: ArrayView3<'_, f64>, mut add: impl FnMut(&mut f64, &f64)) {
    for (mut acc, plane) in out.outer_iter_mut().zip(x.outer_iter()) {
        for row in plane.outer_iter() {
            acc.zip_mut_with(&row, &mut add);
        }
    }
}

/// Sums `data` over `dim`; returns the result type and values (`data`'s shape without `dim`,
/// standard layout). The value is seen as a fixed-rank `(outer, n, inner)` array, `n` the
/// reduced dim: one pairwise sum per contiguous row when `inner == 1`, otherwise a sequential
/// accumulation ([`accumulate`]).
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
    let x = ArrayView3::from_shape((outer, n, inner), values).expect("the dims multiply out");
    let mut out = Array2::<f64>::zeros((outer, inner));
    let ty = match ty {
        Ty::I32 | Ty::I64 | Ty::Bool => {
            accumulate(&mut out, x, |a, &v| *a += v);
            Ty::I64
        }
        Ty::F32 | Ty::Bf16 => {
            if inner == 1 {
                for (o, row) in out.iter_mut().zip(x.index_axis(Axis(2), 0).rows()) {
                    let row = row
                        .as_slice()
                        .expect("rows of a standard array are contiguous");
                    *o = f64::from(0.0f32 + pairwise(row, n, 1));
                }
            } else {
                accumulate(&mut out, x, |a, &v| *a = f64::from(*a as f32 + v as f32));
            }
            if ty == Ty::Bf16 {
                out.mapv_inplace(crate::ty::rbf);
            }
            ty
        }
    };
    let (values, offset) = out.into_raw_vec_and_offset();
    debug_assert_eq!(
        offset.unwrap_or(0),
        0,
        "a fresh array starts at its first element"
    );
    (ty, crate::dense::from_shape_vec(&out_shape, values))
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
