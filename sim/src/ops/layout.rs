//! Layout changes of a whole value: `jnp.reshape` and `jnp.transpose`.

use super::index::{contiguous, strided_copy};
use super::trace_err;
use crate::error::{ErrorKind, SimResult};
use crate::value::{Arr, MAX_RANK, Shape, pool_vec};

/// `jnp.reshape(a, shape)` (one `-1` is inferred).
pub(crate) fn reshape(a: &Arr, dims: &[i64]) -> SimResult<Arr> {
    let n = a.shape.numel();
    let known: i64 = dims.iter().filter(|&&d| d != -1).product();
    // On the stack: a shape of more than MAX_RANK dims is refused below anyway.
    let mut small = [0i64; MAX_RANK];
    let mut large = Vec::new();
    let resolved: &mut [i64] = if dims.len() <= MAX_RANK {
        &mut small[..dims.len()]
    } else {
        large.resize(dims.len(), 0);
        &mut large
    };
    resolved.copy_from_slice(dims);
    if let Some(p) = dims.iter().position(|&d| d == -1) {
        if known == 0 || n as i64 % known != 0 {
            return Err(trace_err(
                ErrorKind::TypeError,
                format!(
                    "cannot reshape array of shape {:?} into shape {dims:?}",
                    a.shape
                ),
            ));
        }
        resolved[p] = n as i64 / known;
    }
    let shape = Shape::from_i64(resolved)?;
    if shape.numel() != n {
        return Err(trace_err(
            ErrorKind::TypeError,
            format!(
                "cannot reshape array of shape {:?} (size {n}) into shape {dims:?} (size {})",
                a.shape,
                shape.numel()
            ),
        ));
    }
    Ok(a.with_shape(shape))
}

/// `jnp.transpose(a, axes)`.
pub(crate) fn transpose(a: &Arr, axes: &[usize]) -> SimResult<Arr> {
    let r = a.shape.rank();
    let mut seen = [false; MAX_RANK];
    if axes.len() != r
        || axes
            .iter()
            .any(|&x| x >= r || std::mem::replace(&mut seen[x], true))
    {
        return Err(trace_err(
            ErrorKind::ValueError,
            format!("axes {axes:?} don't match array of shape {:?}", a.shape),
        ));
    }
    let mut dims = [0usize; MAX_RANK];
    for (k, &ax) in axes.iter().enumerate() {
        dims[k] = a.shape.dims()[ax];
    }
    let shape = Shape::new(&dims[..r])?;
    let Some(va) = a.vals() else {
        return Ok(Arr::traced(a.cat, shape));
    };
    let st = a.shape.strides();
    let mut sp = [0usize; MAX_RANK];
    for (k, &ax) in axes.iter().enumerate() {
        sp[k] = st[ax];
    }
    if contiguous(shape, &sp) {
        // Only dims of 1 move (or none): the same values in the same order.
        return Ok(a.with_shape(shape).opaque());
    }
    let mut out = pool_vec(shape.numel());
    strided_copy(va, 0, shape, sp, &mut out);
    Ok(Arr::new(a.cat, shape, out))
}
