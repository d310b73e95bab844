//! Basic indexing of values (`a[parts]`: ints clamp as jnp's gather does, static slices,
//! `None`, `...`), `lax.dynamic_slice_in_dim`, and the strided-window walks and copies they
//! share with the executor's Ref reads (`exec/refs.rs`).

use super::trace_err;
use crate::error::{ErrorKind, SimResult};
use crate::value::{Arr, MAX_RANK, Shape, pool_vec};

/// One entry of a basic index on a value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum VIdx {
    /// `:`.
    Full,
    /// `None`.
    NewAxis,
    /// `...`.
    Ellipsis,
    /// An integer (static or dynamic: both normalize negatives and clamp, as jnp does).
    Int(Option<i64>),
    /// A static slice.
    Slice(Option<i64>, Option<i64>),
}

/// Python's `slice(start, stop).indices(n)` for step 1: (start, length).
pub(crate) fn slice_range(start: Option<i64>, stop: Option<i64>, n: usize) -> (usize, usize) {
    let n = n as i64;
    let norm = |v: i64| {
        if v < 0 { (v + n).max(0) } else { v.min(n) }
    };
    let a = start.map_or(0, norm);
    let b = stop.map_or(n, norm);
    (a as usize, (b - a).max(0) as usize)
}

/// Basic indexing of a value: `a[parts]`.
pub(crate) fn index_value(a: &Arr, parts: &[VIdx]) -> SimResult<Arr> {
    let consumed = parts
        .iter()
        .filter(|p| !matches!(p, VIdx::NewAxis | VIdx::Ellipsis))
        .count();
    let r = a.shape.rank();
    if consumed > r {
        return Err(trace_err(
            ErrorKind::IndexError,
            format!(
                "Too many indices: {r}-dimensional array indexed with {consumed} regular indices."
            ),
        ));
    }
    if parts.iter().filter(|p| matches!(p, VIdx::Ellipsis)).count() > 1 {
        return Err(trace_err(
            ErrorKind::IndexError,
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let st = a.shape.strides();
    let mut out_shape = Shape::SCALAR;
    let mut out_strides = [0usize; MAX_RANK];
    let mut offset = 0usize;
    let mut dim = 0usize;
    let mut traced_index = false;
    // `push` first: it refuses a dim past MAX_RANK before the stride is stored.
    let mut push = |shape: &mut Shape, stride: usize, size: usize| -> SimResult<()> {
        shape.push(size)?;
        out_strides[shape.rank() - 1] = stride;
        Ok(())
    };
    for p in parts {
        match *p {
            VIdx::Full => {
                push(&mut out_shape, st[dim], a.shape.dims()[dim])?;
                dim += 1;
            }
            VIdx::NewAxis => push(&mut out_shape, 0, 1)?,
            VIdx::Ellipsis => {
                let n = r - consumed;
                for _ in 0..n {
                    push(&mut out_shape, st[dim], a.shape.dims()[dim])?;
                    dim += 1;
                }
            }
            VIdx::Int(v) => {
                let n = a.shape.dims()[dim] as i64;
                if n == 0 {
                    // jnp's gather refuses an empty axis (static or traced index): there is
                    // no element to clamp to.
                    return Err(trace_err(
                        ErrorKind::IndexError,
                        format!("index is out of bounds for axis {dim} with size 0"),
                    ));
                }
                match v {
                    Some(v) => {
                        let v = if v < 0 { v + n } else { v };
                        let v = v.clamp(0, (n - 1).max(0));
                        offset += v as usize * st[dim];
                    }
                    None => traced_index = true,
                }
                dim += 1;
            }
            VIdx::Slice(s, e) => {
                let (start, len) = slice_range(s, e, a.shape.dims()[dim]);
                offset += start * st[dim];
                push(&mut out_shape, st[dim], len)?;
                dim += 1;
            }
        }
    }
    while dim < r {
        push(&mut out_shape, st[dim], a.shape.dims()[dim])?;
        dim += 1;
    }
    let (Some(va), false) = (a.vals(), traced_index) else {
        return Ok(Arr::traced(a.cat, out_shape));
    };
    let n = out_shape.numel();
    if n == 0 {
        return Ok(Arr::new(a.cat, out_shape, Vec::new()));
    }
    if contiguous(out_shape, &out_strides) {
        // One contiguous run (`x[0:1]`, `x[:, None]`, `x[...]`): the whole array shares
        // its storage (values are immutable), a part is one slice copy.
        if n == va.len() {
            return Ok(a.with_shape(out_shape).opaque());
        }
        return Ok(Arr::copied(a.cat, out_shape, &va[offset..offset + n]));
    }
    let mut out = pool_vec(n);
    strided_copy(va, offset, out_shape, out_strides, &mut out);
    Ok(Arr::new(a.cat, out_shape, out))
}

/// `lax.dynamic_slice_in_dim(a, start, size, axis)`: `size` elements of `axis` from `start`
/// clamped into `[0, dim - size]`, as XLA's dynamic-slice clamps; `start` is `None` while
/// tracing (the result is then traced). A size larger than the dim is a trace-time TypeError,
/// as `lax.dynamic_slice` raises it.
pub(crate) fn dynamic_slice_in_dim(
    a: &Arr,
    start: Option<i64>,
    size: i64,
    axis: usize,
) -> SimResult<Arr> {
    let r = a.shape.rank();
    if axis >= r {
        return Err(trace_err(
            ErrorKind::ValueError,
            format!("axis {axis} is out of bounds for array of dimension {r}"),
        ));
    }
    let n = a.shape.dims()[axis] as i64;
    if size < 0 || size > n {
        return Err(trace_err(
            ErrorKind::TypeError,
            format!(
                "slice_sizes must be less than or equal to operand shape, got slice size {size} for a dim of {n}"
            ),
        ));
    }
    let mut parts = vec![VIdx::Full; r];
    let Some(start) = start else {
        let mut shape = Shape::SCALAR;
        for (d, &s) in a.shape.dims().iter().enumerate() {
            shape.push(if d == axis { size as usize } else { s })?;
        }
        return Ok(Arr::traced(a.cat, shape));
    };
    let s = start.clamp(0, n - size);
    parts[axis] = VIdx::Slice(Some(s), Some(s + size));
    index_value(a, &parts)
}

/// Whether a strided window is one contiguous run (row-major strides, ignoring dims of 1).
pub(crate) fn contiguous(shape: Shape, strides: &[usize; MAX_RANK]) -> bool {
    let mut expect = 1;
    for k in (0..shape.rank()).rev() {
        let d = shape.dims()[k];
        if d != 1 && strides[k] != expect {
            return false;
        }
        expect *= d;
    }
    true
}

/// Calls `f(offset)` for each element of a strided window, row-major.
#[inline]
pub(crate) fn for_each_strided(
    offset: usize,
    shape: Shape,
    strides: [usize; MAX_RANK],
    mut f: impl FnMut(usize),
) {
    let r = shape.rank();
    if r == 0 {
        f(offset);
        return;
    }
    if shape.numel() == 0 {
        return;
    }
    let dims = shape.dims();
    let last = r - 1;
    let n_last = dims[last];
    let s_last = strides[last];
    let outer: usize = dims[..last].iter().product();
    let mut idx = [0usize; MAX_RANK];
    let mut base = offset;
    for _ in 0..outer {
        let mut p = base;
        for _ in 0..n_last {
            f(p);
            p += s_last;
        }
        let mut k = last;
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            base += strides[k];
            if idx[k] < dims[k] {
                break;
            }
            base -= strides[k] * dims[k];
            idx[k] = 0;
        }
    }
}

/// Appends the elements of a strided window of `data` to `out`, row-major (whole rows at
/// a time when the last dim is contiguous).
pub(crate) fn strided_copy(
    data: &[f64],
    offset: usize,
    shape: Shape,
    strides: [usize; MAX_RANK],
    out: &mut Vec<f64>,
) {
    let r = shape.rank();
    if r > 0 && strides[r - 1] == 1 {
        // Contiguous rows.
        let n_last = shape.dims()[r - 1];
        let mut row_shape = shape;
        row_shape = Shape::new(&row_shape.dims()[..r - 1]).unwrap_or(Shape::SCALAR);
        if n_last == 0 {
            return;
        }
        for_each_strided(offset, row_shape, strides, |p| {
            out.extend_from_slice(&data[p..p + n_last]);
        });
        return;
    }
    for_each_strided(offset, shape, strides, |p| out.push(data[p]));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Cat;

    /// cargo-fuzz `differential` crash a2c88337 (2026-11-30): `grouped[None, ...][..., None][None]`
    /// on a rank-6 block built a rank-9 value, and the stride was stored before the rank check.
    #[test]
    fn indexing_past_max_rank_is_an_error_not_a_panic() {
        let a = Arr::new(Cat::F32, Shape::new(&[1; MAX_RANK]).unwrap(), vec![1.0]);
        let err = index_value(&a, &[VIdx::NewAxis]).unwrap_err();
        assert!(err.message.contains("at most"), "{}", err.message);
        let ok = index_value(&a, &[VIdx::Int(Some(0)), VIdx::NewAxis]).unwrap();
        assert_eq!(ok.shape.rank(), MAX_RANK);
    }

    /// An integer index into a zero-size dim used to panic on a slice past the (empty) data:
    /// `zeros((0, 4))[0]` has shape (4,) but no element to take. jnp raises `IndexError` when
    /// tracing (its gather refuses an empty axis), for a static or a traced index.
    #[test]
    fn integer_index_into_a_zero_size_dim_is_an_index_error_not_a_panic() {
        let cases: &[(&[usize], &[VIdx], usize)] = &[
            (&[0, 4], &[VIdx::Int(Some(0))], 0),
            (&[0, 4], &[VIdx::Int(Some(-1))], 0),
            (&[0, 4], &[VIdx::Int(None)], 0),
            (
                &[0, 4, 3],
                &[VIdx::Int(Some(0)), VIdx::Full, VIdx::Int(Some(1))],
                0,
            ),
            (&[2, 0, 3], &[VIdx::Full, VIdx::Int(Some(0))], 1),
            (
                &[2, 0, 3],
                &[VIdx::Ellipsis, VIdx::Int(Some(2)), VIdx::Full],
                1,
            ),
            (
                &[3, 0],
                &[VIdx::NewAxis, VIdx::Int(Some(1)), VIdx::Int(Some(0))],
                1,
            ),
        ];
        for &(shape, parts, axis) in cases {
            let shape = Shape::new(shape).unwrap();
            for a in [
                Arr::new(Cat::F32, shape, vec![]),
                Arr::traced(Cat::F32, shape),
            ] {
                let err = index_value(&a, parts).unwrap_err();
                assert_eq!(err.kind, ErrorKind::IndexError, "{shape:?}{parts:?}");
                assert_eq!(
                    err.message,
                    format!("index is out of bounds for axis {axis} with size 0")
                );
            }
        }
    }

    /// Empty windows of a value whose start offset lies past its (empty) data: an empty
    /// value of the window's shape (NumPy/jnp), never a slice panic; `strided_copy` of an
    /// empty window copies nothing wherever it starts.
    #[test]
    fn empty_windows_past_the_end_of_the_data_are_empty_values() {
        let s = |a: i64, b: i64| VIdx::Slice(Some(a), Some(b));
        let cases: &[(&[usize], &[VIdx], &[usize])] = &[
            (&[0, 4], &[s(0, 0), s(2, 3)], &[0, 1]),
            (&[0, 4], &[VIdx::Full, VIdx::Int(Some(3))], &[0]),
            (&[0, 4], &[s(0, 0), s(2, 2)], &[0, 0]),
            (&[2, 0, 3], &[s(1, 1), VIdx::Full, s(2, 3)], &[0, 0, 1]),
            (
                &[2, 0, 3],
                &[VIdx::Int(Some(1)), VIdx::Full, VIdx::Int(Some(2))],
                &[0],
            ),
            (&[3, 4], &[s(3, 3), s(3, 4)], &[0, 1]),
            (&[3, 4], &[VIdx::Int(Some(2)), s(4, 4)], &[0]),
            (&[3, 4], &[s(2, 3), s(4, 4), VIdx::NewAxis], &[1, 0, 1]),
        ];
        for &(shape, parts, want) in cases {
            let shape = Shape::new(shape).unwrap();
            let a = Arr::new(
                Cat::F32,
                shape,
                (0..shape.numel()).map(|v| v as f64).collect(),
            );
            let out = index_value(&a, parts).unwrap();
            assert_eq!(out.shape, Shape::new(want).unwrap(), "{shape:?}{parts:?}");
            assert_eq!(out.vals().map(<[f64]>::len), Some(0), "{shape:?}{parts:?}");
        }
        let mut out = Vec::new();
        let mut strides = [0usize; MAX_RANK];
        strides[..2].copy_from_slice(&[4, 1]);
        for dims in [[0, 1], [0, 4], [1, 0], [3, 0]] {
            strides_copy_check(&mut out, Shape::new(&dims).unwrap(), strides);
        }
    }

    fn strides_copy_check(out: &mut Vec<f64>, shape: Shape, strides: [usize; MAX_RANK]) {
        for offset in [0, 2, 7, 100] {
            strided_copy(&[], offset, shape, strides, out);
            assert!(out.is_empty(), "{shape:?} at {offset}");
        }
    }
}
