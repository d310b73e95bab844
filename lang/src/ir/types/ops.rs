//! Trace-time types of [`TensorOp`]s: what Helion's fake tensors say for the elementwise
//! functions, masks, `torch.where`, reductions, `.transpose`, the matrix products and
//! `torch.nn.functional.pad`.
//!
//! Torch's rules, on the case dtypes: `exp`/`rsqrt` of an int tensor is float32; `relu`,
//! `amax`, `amin` and `transpose` keep the dtype; `sum` keeps it too here, as `.sum(dim)` does
//! in this IR (torch's int64 sum of ints has no case dtype; the reference computes int64);
//! comparisons and `&`/`|` of masks are masks; `torch.where` promotes its two values;
//! `torch.matmul`/`bmm`/`addmm`/`baddbmm` need operands of one dtype; `hl.dot` is float32
//! without an accumulator and the accumulator's dtype with one (Helion 1.5.1
//! `_compute_out_dtype`).

use super::{Dim, Infer, Ty, TypeError, broadcast, err, promote, shape_repr};
use crate::ir::{DType, Span, TensorOp};

fn tensor(t: &Ty, what: &str, span: Span) -> Result<(DType, Vec<Dim>), TypeError> {
    match t {
        Ty::Tensor { dtype, dims } => Ok((*dtype, dims.clone())),
        other => Err(err(span, format!("{what} of a non-tensor ({other:?})"))),
    }
}

fn bcast(a: &[Dim], b: &[Dim], span: Span) -> Result<Vec<Dim>, TypeError> {
    broadcast(a, b).ok_or_else(|| {
        err(
            span,
            format!(
                "shapes {} and {} do not broadcast",
                shape_repr(a),
                shape_repr(b)
            ),
        )
    })
}

fn norm(d: i64, rank: usize, span: Span) -> Result<usize, TypeError> {
    let r = rank as i64;
    let x = if d < 0 { d + r } else { d };
    usize::try_from(x)
        .ok()
        .filter(|&x| x < rank.max(1))
        .ok_or_else(|| err(span, format!("dim {d} out of range for rank {rank}")))
}

/// The product shape of `a @ b` for 2-D or batched 3-D operands (Helion's `_dot_result_shape`
/// broadcasts a 2-D operand against a 3-D one).
fn product(a: &[Dim], b: &[Dim], what: &str, span: Span) -> Result<Vec<Dim>, TypeError> {
    let k_mismatch = |ka: &Dim, kb: &Dim| ka.size != kb.size;
    match (a, b) {
        ([m, ka], [kb, n]) if !k_mismatch(ka, kb) => Ok(vec![*m, *n]),
        ([bt, m, ka], [bb, kb, n]) if !k_mismatch(ka, kb) && bt.size == bb.size => {
            Ok(vec![*bt, *m, *n])
        }
        ([bt, m, ka], [kb, n]) if !k_mismatch(ka, kb) => Ok(vec![*bt, *m, *n]),
        ([m, ka], [bt, kb, n]) if !k_mismatch(ka, kb) => Ok(vec![*bt, *m, *n]),
        _ => Err(err(
            span,
            format!(
                "{what}: shapes {} and {} cannot be multiplied",
                shape_repr(a),
                shape_repr(b)
            ),
        )),
    }
}

impl Infer<'_> {
    pub(super) fn op(&self, op: &TensorOp, args: &[&Ty], span: Span) -> Result<Ty, TypeError> {
        let what = op.construct();
        Ok(match (op, args) {
            (TensorOp::Exp | TensorOp::Rsqrt | TensorOp::Unary(_), [x]) => {
                let (d, dims) = tensor(x, what, span)?;
                let dtype = if d == DType::Int32 { DType::Float32 } else { d };
                Ty::Tensor { dtype, dims }
            }
            (TensorOp::Relu, [x]) => {
                let (dtype, dims) = tensor(x, what, span)?;
                Ty::Tensor { dtype, dims }
            }
            (TensorOp::Maximum | TensorOp::Minimum, [a, b]) => {
                let (da, sa) = tensor(a, what, span)?;
                let (db, sb) = tensor(b, what, span)?;
                Ty::Tensor {
                    dtype: promote(da, db),
                    dims: bcast(&sa, &sb, span)?,
                }
            }
            (TensorOp::IntMin | TensorOp::IntMax, [a, b]) => {
                let scalar_int = |t: &Ty| match t {
                    Ty::Int(_) | Ty::GridIndex(_) => Some(false),
                    Ty::Tensor {
                        dtype: DType::Int32,
                        dims,
                    } if dims.is_empty() => Some(true),
                    _ => None,
                };
                let (Some(ta), Some(tb)) = (scalar_int(a), scalar_int(b)) else {
                    return Err(err(
                        span,
                        format!("`{what}` takes two scalar ints, not {a:?} and {b:?}"),
                    ));
                };
                match (a.const_int(), b.const_int()) {
                    (Some(x), Some(y)) => Ty::Int(Some(crate::ir::sym::Affine::constant(
                        if matches!(op, TensorOp::IntMin) {
                            x.min(y)
                        } else {
                            x.max(y)
                        },
                    ))),
                    // A value loaded from an int tensor stays a device scalar, as in Helion.
                    _ if ta || tb => Ty::Tensor {
                        dtype: DType::Int32,
                        dims: Vec::new(),
                    },
                    _ => Ty::Int(None),
                }
            }
            (TensorOp::Mod, [a, b]) => match (a, b) {
                (Ty::Tensor { .. }, _) | (_, Ty::Tensor { .. }) => {
                    self.binary(crate::ir::BinOp::Mul, a, b, span)?
                }
                (Ty::Float, _) | (_, Ty::Float) => Ty::Float,
                _ => match (a.const_int(), b.const_int()) {
                    (Some(x), Some(y)) if y != 0 => {
                        Ty::Int(Some(crate::ir::sym::Affine::constant(
                            x.rem_euclid(y) + if y < 0 && x.rem_euclid(y) != 0 { y } else { 0 },
                        )))
                    }
                    _ if matches!(a, Ty::Int(_) | Ty::GridIndex(_))
                        && matches!(b, Ty::Int(_) | Ty::GridIndex(_)) =>
                    {
                        Ty::Int(None)
                    }
                    _ => return Err(err(span, format!("cannot apply `%` to {a:?} and {b:?}"))),
                },
            },
            (TensorOp::And | TensorOp::Or, [a, b]) => match (a, b) {
                (Ty::Mask { dims: x }, Ty::Mask { dims: y }) => Ty::Mask {
                    dims: bcast(x, y, span)?,
                },
                (
                    Ty::Tensor {
                        dtype: DType::Int32,
                        dims: x,
                    },
                    Ty::Tensor {
                        dtype: DType::Int32,
                        dims: y,
                    },
                ) => Ty::Tensor {
                    dtype: DType::Int32,
                    dims: bcast(x, y, span)?,
                },
                _ => {
                    return Err(err(
                        span,
                        format!("`{what}` takes two masks or two int tensors, not {a:?} and {b:?}"),
                    ));
                }
            },
            (TensorOp::Cmp(_), [a, b]) => match (a.dims(), b.dims()) {
                (Some(x), Some(y)) => Ty::Mask {
                    dims: bcast(x, y, span)?,
                },
                (Some(x), None) | (None, Some(x))
                    if matches!(a, Ty::Int(_) | Ty::Float | Ty::GridIndex(_))
                        || matches!(b, Ty::Int(_) | Ty::Float | Ty::GridIndex(_)) =>
                {
                    Ty::Mask { dims: x.to_vec() }
                }
                _ if !matches!(a, Ty::Tile(_) | Ty::HostTensor { .. })
                    && !matches!(b, Ty::Tile(_) | Ty::HostTensor { .. }) =>
                {
                    Ty::Bool
                }
                _ => return Err(err(span, format!("cannot compare {a:?} and {b:?}"))),
            },
            (TensorOp::Where, [c, a, b]) => {
                let Ty::Mask { dims: dc } = c else {
                    return Err(err(
                        span,
                        format!("torch.where's condition is a mask, not {c:?}"),
                    ));
                };
                let v = self.binary(crate::ir::BinOp::Mul, a, b, span);
                match v {
                    Ok(Ty::Tensor { dtype, dims }) => Ty::Tensor {
                        dtype,
                        dims: bcast(dc, &dims, span)?,
                    },
                    Ok(Ty::Float) => Ty::Tensor {
                        dtype: DType::Float32,
                        dims: dc.clone(),
                    },
                    _ => {
                        return Err(err(span, format!("torch.where of {a:?} and {b:?}")));
                    }
                }
            }
            (
                TensorOp::Reduce {
                    kind,
                    dims,
                    keepdim,
                },
                [x],
            ) => {
                let (dtype, shape) = tensor(x, what, span)?;
                // torch's int64 index has no case dtype: int32, as `sum` of ints keeps it.
                let dtype = if kind.is_index() { DType::Int32 } else { dtype };
                let rank = shape.len();
                let mut reduced = vec![false; rank];
                match dims {
                    None => reduced.iter_mut().for_each(|r| *r = true),
                    Some(ds) => {
                        for &d in ds {
                            let i = norm(d, rank, span)?;
                            if rank == 0 {
                                continue;
                            }
                            if reduced[i] {
                                return Err(err(span, format!("dim {d} appears twice in {what}")));
                            }
                            reduced[i] = true;
                        }
                    }
                }
                let dims = shape
                    .iter()
                    .zip(&reduced)
                    .filter_map(|(d, &r)| match (r, keepdim) {
                        (false, _) => Some(*d),
                        (true, true) => Some(Dim::fixed(1)),
                        (true, false) => None,
                    })
                    .collect();
                Ty::Tensor { dtype, dims }
            }
            (TensorOp::Transpose(a, b), [x]) => {
                let (dtype, mut dims) = tensor(x, what, span)?;
                if !dims.is_empty() {
                    let (i, j) = (norm(*a, dims.len(), span)?, norm(*b, dims.len(), span)?);
                    dims.swap(i, j);
                }
                Ty::Tensor { dtype, dims }
            }
            (TensorOp::Matmul | TensorOp::Bmm, [a, b]) => {
                let (da, sa) = tensor(a, what, span)?;
                let (db, sb) = tensor(b, what, span)?;
                if da != db {
                    return Err(err(
                        span,
                        format!("{what}: operands of dtypes {da:?} and {db:?}"),
                    ));
                }
                if matches!(op, TensorOp::Bmm) && (sa.len() != 3 || sb.len() != 3) {
                    return Err(err(span, "torch.bmm takes 3-D operands"));
                }
                Ty::Tensor {
                    dtype: da,
                    dims: product(&sa, &sb, what, span)?,
                }
            }
            (TensorOp::Addmm | TensorOp::Baddbmm, [bias, a, b]) => {
                let (da, sa) = tensor(a, what, span)?;
                let (db, sb) = tensor(b, what, span)?;
                let (dc, sc) = tensor(bias, what, span)?;
                // Eager torch refuses a bias of another dtype than the factors; Helion reads
                // `torch.addmm(acc, a, b)` in a kernel as `hl.dot(a, b, acc=acc)` (its matmul
                // examples accumulate bf16 factors into a float32 `acc`): the result has the
                // bias's dtype. The factors must agree in both.
                if da != db {
                    return Err(err(span, format!("{what}: operands of different dtypes")));
                }
                let want = if matches!(op, TensorOp::Addmm) { 2 } else { 3 };
                if sa.len() != want || sb.len() != want {
                    return Err(err(span, format!("{what} takes {want}-D matrices")));
                }
                let dims = product(&sa, &sb, what, span)?;
                let joined = bcast(&sc, &dims, span)?;
                if joined.len() != dims.len()
                    || joined.iter().zip(&dims).any(|(j, d)| j.size != d.size)
                {
                    return Err(err(
                        span,
                        format!("{what}: the bias does not broadcast to the product"),
                    ));
                }
                Ty::Tensor { dtype: dc, dims }
            }
            (TensorOp::Dot, [a, b, rest @ ..]) => {
                let (_, sa) = tensor(a, what, span)?;
                let (_, sb) = tensor(b, what, span)?;
                let dims = product(&sa, &sb, what, span)?;
                match rest {
                    [] => Ty::Tensor {
                        dtype: DType::Float32,
                        dims,
                    },
                    [acc] => {
                        let (dacc, sacc) = tensor(acc, what, span)?;
                        if sacc.iter().map(|d| d.size).ne(dims.iter().map(|d| d.size)) {
                            return Err(err(
                                span,
                                "hl.dot: the accumulator's shape is not the product's",
                            ));
                        }
                        Ty::Tensor {
                            dtype: dacc,
                            dims: sacc,
                        }
                    }
                    _ => return Err(err(span, "hl.dot takes two matrices and an accumulator")),
                }
            }
            (TensorOp::Pad(pads), [x, fill]) => {
                let (dtype, mut dims) = tensor(x, what, span)?;
                if !matches!(fill, Ty::Int(_) | Ty::Float) {
                    return Err(err(
                        span,
                        format!("{what}: the fill value is a Python number"),
                    ));
                }
                if pads.len() % 2 != 0 || pads.len() / 2 > dims.len() {
                    return Err(err(
                        span,
                        format!(
                            "{what}: {} pads for a tensor of rank {} (pairs, at most two per dim)",
                            pads.len(),
                            dims.len()
                        ),
                    ));
                }
                if pads.iter().any(|&p| p < 0) {
                    return Err(err(
                        span,
                        format!("{what}: a negative pad (cropping) is not part of a case script"),
                    ));
                }
                // `(before, after)` pairs from the last dim backwards; a padded dim is a fixed
                // size (Helion's symbol `u + k` equals no tile's).
                for (i, pair) in pads.chunks(2).enumerate() {
                    let d = dims.len() - 1 - i;
                    let size = dims[d]
                        .size
                        .checked_add(pair[0])
                        .and_then(|s| s.checked_add(pair[1]))
                        .filter(|&s| s <= i64::from(i32::MAX))
                        .ok_or_else(|| err(span, format!("{what}: a padded dim over 2^31")))?;
                    dims[d] = Dim::fixed(size);
                }
                Ty::Tensor { dtype, dims }
            }
            // A wrong operand count (the frontend and the well-formedness check refuse it; a
            // hand-edited JSON case may still carry one).
            (
                TensorOp::Exp
                | TensorOp::Relu
                | TensorOp::Rsqrt
                | TensorOp::Unary(_)
                | TensorOp::Maximum
                | TensorOp::Minimum
                | TensorOp::IntMin
                | TensorOp::IntMax
                | TensorOp::Mod
                | TensorOp::And
                | TensorOp::Or
                | TensorOp::Cmp(_)
                | TensorOp::Where
                | TensorOp::Reduce { .. }
                | TensorOp::Transpose(..)
                | TensorOp::Matmul
                | TensorOp::Bmm
                | TensorOp::Addmm
                | TensorOp::Baddbmm
                | TensorOp::Dot
                | TensorOp::Pad(_),
                _,
            ) => {
                return Err(err(span, format!("{what} with {} operands", args.len())));
            }
        })
    }
}
