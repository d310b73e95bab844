//! Broadcasting: NumPy's rule for two shapes, strided iteration over a broadcast pair of
//! operands, and `jnp.broadcast_to`.

use super::trace_err;
use crate::error::{ErrorKind, SimResult};
use crate::value::{Arr, MAX_RANK, Shape, pool_vec};

/// NumPy broadcasting of two shapes.
pub(super) fn broadcast_shapes(a: Shape, b: Shape, what: &str) -> SimResult<Shape> {
    let (ra, rb) = (a.rank(), b.rank());
    let r = ra.max(rb);
    let mut out = [0usize; MAX_RANK];
    for (k, slot) in out.iter_mut().enumerate().take(r) {
        let da = if k + ra >= r { a.dims()[k + ra - r] } else { 1 };
        let db = if k + rb >= r { b.dims()[k + rb - r] } else { 1 };
        *slot = lang::ir::arith::broadcast_dim(da, db).ok_or_else(|| {
            trace_err(
                ErrorKind::TypeError,
                format!("{what} got incompatible shapes for broadcasting: {a:?}, {b:?}"),
            )
        })?;
    }
    Shape::new(&out[..r])
}

/// Strides (0 on broadcast dims) to read `src` as `out`-shaped.
pub(super) fn bcast_strides(src: Shape, out: Shape) -> [usize; MAX_RANK] {
    let st = src.strides();
    let mut s = [0usize; MAX_RANK];
    let (rs, ro) = (src.rank(), out.rank());
    for (k, (&d, &stride)) in src.dims().iter().zip(&st).enumerate() {
        s[k + ro - rs] = if d == 1 { 0 } else { stride };
    }
    s
}

/// Calls `f(a_index, b_index)` for each element of `out` in row-major order.
pub(super) fn for_each2(
    out: Shape,
    sa: [usize; MAX_RANK],
    sb: [usize; MAX_RANK],
    mut f: impl FnMut(usize, usize),
) {
    for_each_row2(out, sa, sb, |pa, la, pb, lb, len| {
        for i in 0..len {
            f(pa + i * la, pb + i * lb);
        }
    });
}

/// Calls `row(a_start, a_step, b_start, b_step, len)` for each row (run along the last dim)
/// of `out` in row-major order, `len > 0`; a 0-d `out` is one row of one element. A step is 1
/// (a row-major operand) or 0 (broadcast along the row), so that callers can work on whole
/// rows (slices) instead of indexing element by element.
pub(super) fn for_each_row2(
    out: Shape,
    sa: [usize; MAX_RANK],
    sb: [usize; MAX_RANK],
    mut row: impl FnMut(usize, usize, usize, usize, usize),
) {
    let r = out.rank();
    if r == 0 {
        row(0, 0, 0, 0, 1);
        return;
    }
    let dims = out.dims();
    let last = r - 1;
    let n_last = dims[last];
    if n_last == 0 {
        return;
    }
    let (la, lb) = (sa[last], sb[last]);
    let outer: usize = dims[..last].iter().product();
    let mut idx = [0usize; MAX_RANK];
    let (mut ia, mut ib) = (0usize, 0usize);
    for _ in 0..outer {
        row(ia, la, ib, lb, n_last);
        // Advance the outer multi-index.
        let mut k = last;
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            ia += sa[k];
            ib += sb[k];
            if idx[k] < dims[k] {
                break;
            }
            ia -= sa[k] * dims[k];
            ib -= sb[k] * dims[k];
            idx[k] = 0;
        }
    }
}

/// `jnp.broadcast_to(a, shape)`.
pub(crate) fn broadcast_to(a: &Arr, shape: Shape) -> SimResult<Arr> {
    if a.shape == shape {
        return Ok(a.clone());
    }
    let ok = a.shape.rank() <= shape.rank()
        && a.shape.dims().iter().enumerate().all(|(k, &d)| {
            let o = shape.dims()[k + shape.rank() - a.shape.rank()];
            d == o || d == 1
        });
    if !ok {
        return Err(trace_err(
            ErrorKind::ValueError,
            format!(
                "Incompatible shapes for broadcasting: {:?} and requested shape {:?}",
                a.shape, shape
            ),
        ));
    }
    let Some(va) = a.vals() else {
        return Ok(Arr::traced(a.cat, shape));
    };
    let mut out = pool_vec(shape.numel());
    if va.len() == 1 {
        out.resize(shape.numel(), va[0]);
    } else {
        let sa = bcast_strides(a.shape, shape);
        for_each_row2(shape, sa, [0; MAX_RANK], |pa, la, _, _, len| match la {
            1 => out.extend_from_slice(&va[pa..pa + len]),
            _ => out.extend((0..len).map(|i| va[pa + i * la])),
        });
    }
    Ok(Arr {
        konst: a.konst,
        ..Arr::new(a.cat, shape, out)
    })
}
