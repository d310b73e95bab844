//! `jnp` and `lax` array calls (`jnp.sum`, `jnp.where`, `lax.dynamic_slice_in_dim`, ...),
//! with XLA's merge of directly nested sums into one reduce, and `lax.dot_general`.

use super::{Machine, describe, into_arr, py_int, te};
use crate::error::{ErrorKind, SimResult};
use crate::ops;
use crate::reduce;
use crate::resolve::{RExpr, RJnp};
use crate::value::{Arr, Cat, Shape, Value};
use lang::tensor::DType;

/// Adds to `axes` (dims of `src` already summed, sorted) the dim a `jnp.sum(.., axis)` of the
/// partial sum reduces: the `axis`-th dim not in `axes`.
fn add_sum_axis(src: &Arr, axes: &mut Vec<usize>, axis: usize) -> SimResult<()> {
    let mut kept = (0..src.shape.rank()).filter(|a| !axes.contains(a));
    let Some(ax) = kept.nth(axis) else {
        let n = (0..src.shape.rank()).filter(|a| !axes.contains(a)).count();
        return Err(te(
            ErrorKind::ValueError,
            format!("axis {axis} is out of bounds for array of dimension {n}"),
        ));
    };
    axes.push(ax);
    axes.sort_unstable();
    Ok(())
}

impl<'p> Machine<'p> {
    fn static_shape(&mut self, dims: &'p [RExpr]) -> SimResult<Shape> {
        let mut s = Shape::SCALAR;
        for d in dims {
            let v = self.eval(d)?;
            match py_int(&v) {
                Some(n) if n >= 0 => s.push(n as usize)?,
                Some(n) => {
                    return Err(te(
                        ErrorKind::ValueError,
                        format!("negative dimensions are not allowed: {n}"),
                    ));
                }
                None => {
                    return Err(te(
                        ErrorKind::TypeError,
                        format!("Shapes must be static ints, got {}", describe(&v)),
                    ));
                }
            }
        }
        Ok(s)
    }

    pub(super) fn jnp(&mut self, j: &'p RJnp) -> SimResult<Arr> {
        match j {
            RJnp::Clip(x, lo, hi) => {
                let x = self.arr(x)?;
                let lo = self.arr(lo)?;
                let hi = self.arr(hi)?;
                let m = ops::min_max(true, &lo, &x)?;
                ops::min_max(false, &hi, &m)
            }
            RJnp::Minimum(a, b) => {
                let (a, b) = (self.arr(a)?, self.arr(b)?);
                ops::min_max(false, &a, &b)
            }
            RJnp::Maximum(a, b) => {
                let (a, b) = (self.arr(a)?, self.arr(b)?);
                ops::min_max(true, &a, &b)
            }
            RJnp::Arange(start, stop, dtype) => {
                let (a, b) = (self.eval(start)?, self.eval(stop)?);
                let (Some(a), Some(b)) = (py_int(&a), py_int(&b)) else {
                    return Err(te(
                        ErrorKind::ConcretizationTypeError,
                        "jnp.arange needs concrete bounds: a traced value was given",
                    ));
                };
                let n = (b - a).max(0) as usize;
                let cat = Cat::of(*dtype);
                let vals = (0..n).map(|k| cat.round((a + k as i64) as f64)).collect();
                Ok(Arr::new(cat, Shape::new(&[n])?, vals))
            }
            RJnp::Zeros(shape, dtype) => {
                let s = self.static_shape(shape)?;
                let cat = Cat::of(*dtype);
                if self.tracing {
                    return Ok(Arr::traced(cat, s));
                }
                Ok(Arr {
                    konst: true,
                    ..Arr::new(cat, s, vec![0.0; s.numel()])
                })
            }
            RJnp::Full(shape, value, dtype) => {
                let s = self.static_shape(shape)?;
                let v = self.eval(value)?;
                let cat = Cat::of(*dtype);
                let fill = match v {
                    Value::Float(f) => Arr::konst(cat, ops::convert(f, Cat::F32, cat)),
                    other => ops::cast(&into_arr(other)?, cat),
                };
                ops::broadcast_to(&fill, s)
            }
            RJnp::Sum(x, axis) => {
                let (src, mut axes) = self.sum_source(x)?;
                add_sum_axis(&src, &mut axes, *axis)?;
                reduce::sum(&src, &axes)
            }
            RJnp::Reshape(x, shape) => {
                let a = self.arr(x)?;
                ops::reshape(&a, shape)
            }
            RJnp::Transpose(x, axes) => {
                let a = self.arr(x)?;
                ops::transpose(&a, axes)
            }
            RJnp::BroadcastTo(x, shape) => {
                let a = self.arr(x)?;
                ops::broadcast_to(&a, Shape::from_i64(shape)?)
            }
            RJnp::DynamicSliceInDim(x, start, size, axis) => {
                let a = self.arr(x)?;
                let start = self.int_operand(start, "dynamic_slice_in_dim's start")?;
                ops::dynamic_slice_in_dim(&a, start.value(), *size, *axis)
            }
            RJnp::Where(c, a, b) => {
                let c = self.arr(c)?;
                let c = if c.cat == Cat::Bool {
                    c
                } else {
                    ops::cast(&c, Cat::Bool)
                };
                let (a, b) = (self.arr(a)?, self.arr(b)?);
                ops::where_(&c, &a, &b)
            }
            RJnp::DotGeneral(lhs, rhs, dims) => {
                let (a, b) = (self.arr(lhs)?, self.arr(rhs)?);
                ops::dot_general(&a, &b, dims)
            }
            RJnp::OneHot(x, n, dtype) => {
                let x = self.arr(x)?;
                ops::one_hot(&x, *n, Cat::of(*dtype))
            }
        }
    }

    /// The operand of a `jnp.sum` with the axes already reduced by directly nested float32
    /// sums (XLA merges `reduce(reduce(x))` into one reduce over both dims, which changes the
    /// summation order; an identity `jnp.reshape` between them is no obstacle).
    fn sum_source(&mut self, x: &'p RExpr) -> SimResult<(Arr, Vec<usize>)> {
        fn is_sum(e: &RExpr) -> bool {
            match e {
                RExpr::Jnp(RJnp::Sum(..)) => true,
                RExpr::Astype(v, DType::Float32) => matches!(&**v, RExpr::Jnp(RJnp::Sum(..))),
                RExpr::Jnp(RJnp::Reshape(v, _)) => is_sum(v),
                _ => false,
            }
        }
        if let RExpr::Jnp(RJnp::Reshape(inner, shape)) = x
            && is_sum(inner)
        {
            let (src, axes) = self.sum_source(inner)?;
            let kept: Vec<i64> = (0..src.shape.rank())
                .filter(|a| !axes.contains(a))
                .map(|a| src.shape.dims()[a] as i64)
                .collect();
            if !axes.is_empty() && kept == *shape {
                return Ok((src, axes));
            }
            let s = if axes.is_empty() {
                src
            } else {
                reduce::sum(&src, &axes)?
            };
            return Ok((ops::reshape(&s, shape)?, Vec::new()));
        }
        let inner = match x {
            RExpr::Jnp(RJnp::Sum(inner, axis)) => Some((inner, *axis)),
            RExpr::Astype(v, DType::Float32) => match &**v {
                RExpr::Jnp(RJnp::Sum(inner, axis)) => Some((inner, *axis)),
                _ => None,
            },
            _ => None,
        };
        let Some((inner, axis)) = inner else {
            return Ok((self.arr(x)?, Vec::new()));
        };
        let (src, mut axes) = self.sum_source(inner)?;
        add_sum_axis(&src, &mut axes, axis)?;
        let merge = matches!(src.cat, Cat::F32 | Cat::WeakFloat | Cat::I32 | Cat::WeakInt)
            && !matches!(x, RExpr::Astype(..) if src.cat != Cat::F32);
        if merge {
            return Ok((src, axes));
        }
        let s = reduce::sum(&src, &axes)?;
        let s = match x {
            RExpr::Astype(_, d) => ops::astype(&s, *d),
            _ => s,
        };
        Ok((s, Vec::new()))
    }
}
