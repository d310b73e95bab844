//! The shape run's model of the torch ops (`lang::ir::ops`): result shapes and dtypes by
//! torch's rules, as `lang::ir::types::ops` states them. A mask is an int32 tensor here: the
//! run decides admissibility by shapes and index ranges, which a mask's element type does not
//! change (a `torch.where` over a non-mask is an invalid case the reference reports).

use super::run::ShapeRun;
use super::values::{R, TV, V, broadcast, norm_dim, promote};
use lang::ir::{DType, TensorOp};

fn tensor(v: V, what: &str) -> R<TV> {
    match v {
        V::T(t) => Ok(t),
        other => Err(format!("{what} of {}", other.what())),
    }
}

fn shape_of(v: &V) -> R<Vec<usize>> {
    match v {
        V::T(t) => Ok(t.shape.clone()),
        V::Int(_) | V::Float => Ok(Vec::new()),
        other => Err(format!("an op on {}", other.what())),
    }
}

fn fresh(shape: Vec<usize>, dtype: DType) -> V {
    V::T(TV {
        shape,
        dtype,
        ints: None,
        contiguous: true,
    })
}

fn matmul(a: &[usize], b: &[usize], what: &str) -> R<Vec<usize>> {
    match (a, b) {
        ([m, k], [k2, n]) if k == k2 => Ok(vec![*m, *n]),
        ([ba, m, k], [bb, k2, n]) if k == k2 && ba == bb => Ok(vec![*ba, *m, *n]),
        _ => Err(format!("{what} of shapes {a:?} and {b:?}")),
    }
}

impl ShapeRun<'_> {
    pub(super) fn op(&mut self, op: &TensorOp, args: Vec<V>) -> R<V> {
        let what = op.construct();
        let (lo, hi) = op.arity();
        if !(lo..=hi).contains(&args.len()) {
            return Err(format!("{what} with {} operands", args.len()));
        }
        let mut it = args.into_iter();
        match op {
            TensorOp::Exp | TensorOp::Rsqrt | TensorOp::Relu | TensorOp::Unary(_) => {
                let t = tensor(it.next().expect("arity checked"), what)?;
                let dtype = match op {
                    TensorOp::Relu => t.dtype,
                    _ if t.dtype == DType::Int32 => DType::Float32,
                    _ => t.dtype,
                };
                Ok(fresh(t.shape, dtype))
            }
            TensorOp::Maximum | TensorOp::Minimum => {
                let (a, b) = (
                    tensor(it.next().expect("arity checked"), what)?,
                    tensor(it.next().expect("arity checked"), what)?,
                );
                Ok(fresh(
                    broadcast(&a.shape, &b.shape)?,
                    promote(a.dtype, b.dtype),
                ))
            }
            TensorOp::IntMin | TensorOp::IntMax => {
                match (
                    it.next().expect("arity checked"),
                    it.next().expect("arity checked"),
                ) {
                    (V::Int(a), V::Int(b)) => Ok(V::Int(if matches!(op, TensorOp::IntMin) {
                        a.min(b)
                    } else {
                        a.max(b)
                    })),
                    (a, b) => Err(format!("{what} of {} and {}", a.what(), b.what())),
                }
            }
            TensorOp::Mod | TensorOp::And | TensorOp::Or | TensorOp::Cmp(_) | TensorOp::Where => {
                let vs: Vec<V> = it.by_ref().take(lo).collect();
                let mut shape = Vec::new();
                let mut dtype: Option<DType> = None;
                let mut float_scalar = false;
                let values = if matches!(op, TensorOp::Where) {
                    &vs[1..]
                } else {
                    &vs[..]
                };
                for v in &vs {
                    shape = broadcast(&shape, &shape_of(v)?)?;
                }
                for v in values {
                    match v {
                        V::T(t) => dtype = Some(dtype.map_or(t.dtype, |d| promote(d, t.dtype))),
                        V::Float => float_scalar = true,
                        _ => {}
                    }
                }
                let dtype = match (op, dtype) {
                    (TensorOp::Cmp(_) | TensorOp::And | TensorOp::Or, _) => DType::Int32,
                    (_, Some(DType::Int32)) | (_, None) if float_scalar => DType::Float32,
                    (_, Some(d)) => d,
                    (_, None) => DType::Int32,
                };
                if vs.iter().all(|v| matches!(v, V::Int(_) | V::Float)) {
                    return Ok(if float_scalar { V::Float } else { V::Int(0) });
                }
                Ok(fresh(shape, dtype))
            }
            TensorOp::Reduce {
                kind,
                dims,
                keepdim,
            } => {
                let t = tensor(it.next().expect("arity checked"), what)?;
                let rank = t.shape.len();
                let mut reduced = vec![dims.is_none(); rank];
                for &d in dims.iter().flatten() {
                    if rank > 0 {
                        reduced[norm_dim(d, rank)?] = true;
                    }
                }
                let shape = t
                    .shape
                    .iter()
                    .zip(&reduced)
                    .filter_map(|(&s, &r)| match (r, keepdim) {
                        (false, _) => Some(s),
                        (true, true) => Some(1),
                        (true, false) => None,
                    })
                    .collect();
                let dtype = if kind.is_index() {
                    DType::Int32
                } else {
                    t.dtype
                };
                Ok(fresh(shape, dtype))
            }
            TensorOp::Pad(pads) => {
                let mut t = tensor(it.next().expect("arity checked"), what)?;
                if pads.len() % 2 != 0 || pads.len() / 2 > t.shape.len() {
                    return Err(format!(
                        "{what}: {} pads for rank {}",
                        pads.len(),
                        t.shape.len()
                    ));
                }
                let rank = t.shape.len();
                for (i, pair) in pads.chunks(2).enumerate() {
                    let grown = [pair[0], pair[1]]
                        .iter()
                        .try_fold(t.shape[rank - 1 - i], |s, &p| {
                            usize::try_from(p).ok().and_then(|p| s.checked_add(p))
                        })
                        .ok_or_else(|| format!("{what}: pads {pads:?}"))?;
                    t.shape[rank - 1 - i] = grown;
                }
                Ok(fresh(t.shape, t.dtype))
            }
            TensorOp::Transpose(a, b) => {
                let mut t = tensor(it.next().expect("arity checked"), what)?;
                if !t.shape.is_empty() {
                    let (i, j) = (norm_dim(*a, t.shape.len())?, norm_dim(*b, t.shape.len())?);
                    t.shape.swap(i, j);
                }
                Ok(fresh(t.shape, t.dtype))
            }
            TensorOp::Matmul | TensorOp::Bmm | TensorOp::Dot => {
                let (a, b) = (
                    tensor(it.next().expect("arity checked"), what)?,
                    tensor(it.next().expect("arity checked"), what)?,
                );
                let shape = matmul(&a.shape, &b.shape, what)?;
                let dtype = match op {
                    TensorOp::Dot => match it.next() {
                        Some(acc) => tensor(acc, what)?.dtype,
                        None => DType::Float32,
                    },
                    _ => a.dtype,
                };
                Ok(fresh(shape, dtype))
            }
            TensorOp::Addmm | TensorOp::Baddbmm => {
                let bias = tensor(it.next().expect("arity checked"), what)?;
                let (a, b) = (
                    tensor(it.next().expect("arity checked"), what)?,
                    tensor(it.next().expect("arity checked"), what)?,
                );
                let shape = matmul(&a.shape, &b.shape, what)?;
                if broadcast(&bias.shape, &shape)? != shape {
                    return Err(format!("{what}: the bias does not broadcast to {shape:?}"));
                }
                Ok(fresh(shape, a.dtype))
            }
        }
    }
}
