//! Expressions: names, literals, `.size`, tile attributes as symbols, comparisons, loads and
//! device subscripts, `hl.arange`, `hl.zeros`/`hl.full`, casts, `.sum`, views, `.permute`,
//! host allocations, and binary arithmetic with torch's dtype rules on tensors and affine
//! arithmetic on ints. Every typed expression is recorded under its [`NodeKey`].

use super::{Dim, Infer, Pointwise, Ty, TypeError, err, promote, shape_repr};
use crate::ir::sym::{Affine, BlockId, Sym};
use crate::ir::{AllocShape, BinOp, DType, Expr, ExprKind, NodeKey, Span, TileAttr, ViewOp};
use std::collections::hash_map::Entry;

impl Infer<'_> {
    /// Types `e`, records its type, and lends the record: a caller that only reads the type
    /// of a sub-expression (an operand, a bound, a discarded value) copies nothing (a copy per
    /// node for the caller, and its drop, were a fifth of `infer`'s instructions, callgrind
    /// over the corpus cases).
    pub(super) fn expr(&mut self, e: &Expr) -> Result<&Ty, TypeError> {
        let ty = self.expr_inner(e)?;
        Ok(match self.exprs.entry(NodeKey::of(e)) {
            // A loop body typed a second time retypes its nodes.
            Entry::Occupied(o) => {
                let slot = o.into_mut();
                *slot = ty;
                slot
            }
            Entry::Vacant(v) => v.insert(ty),
        })
    }

    /// The type [`Infer::expr`] recorded for `e`.
    pub(super) fn typed(&self, e: &Expr) -> &Ty {
        &self.exprs[&NodeKey::of(e)]
    }

    fn expr_inner(&mut self, e: &Expr) -> Result<Ty, TypeError> {
        Ok(match &e.kind {
            ExprKind::Name(n) => self
                .env
                .get(n.as_str())
                .cloned()
                .ok_or_else(|| err(e.span, format!("name `{n}` is not bound here")))?,
            ExprKind::Int(v) => Ty::Int(Some(Affine::constant(*v))),
            ExprKind::Float(_) => Ty::Float,
            ExprKind::Size { value, dim } => {
                let t = self.expr(value)?;
                let sizes: Vec<(i64, Option<BlockId>)> = match &t {
                    Ty::HostTensor { shape, .. } => shape.iter().map(|&s| (s, None)).collect(),
                    Ty::Tensor { dims, .. } => dims.iter().map(|d| (d.size, d.block)).collect(),
                    _ => return Err(err(e.span, "`.size()` of a non-tensor")),
                };
                let r = sizes.len() as i64;
                let d = if *dim < 0 { dim + r } else { *dim };
                let (s, b) = *usize::try_from(d)
                    .ok()
                    .and_then(|d| sizes.get(d))
                    .ok_or_else(|| err(e.span, format!("dim {dim} out of range for rank {r}")))?;
                match b {
                    Some(b) => Ty::Int(Some(Affine::sym(Sym::BlockSize(b)))),
                    None => Ty::Int(Some(Affine::constant(s))),
                }
            }
            ExprKind::TileAttr { tile, attr } => {
                let b = match self.env.get(tile.as_str()) {
                    Some(Ty::Tile(b)) => *b,
                    _ => return Err(err(e.span, format!("`{tile}` is not a tile"))),
                };
                match attr {
                    TileAttr::Begin => Ty::Int(Some(Affine::sym(Sym::TileBegin(b)))),
                    TileAttr::End => Ty::Int(Some(Affine::sym(Sym::TileEnd(b)))),
                    TileAttr::Count => Ty::Int(Some(Affine::sym(Sym::TileCount(b)))),
                    TileAttr::Id => Ty::Int(Some(Affine::sym(Sym::TileId(b)))),
                    TileAttr::BlockSize => Ty::Int(Some(Affine::sym(Sym::BlockSize(b)))),
                    TileAttr::Index => Ty::Tensor {
                        dtype: DType::Int32,
                        dims: vec![Dim::tiled(self.sizes.effective[b], b)],
                    },
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.expr(lhs)?;
                self.expr(rhs)?;
                self.binary(*op, self.typed(lhs), self.typed(rhs), e.span)?
            }
            ExprKind::Compare { lhs, rhs, .. } => {
                self.expr(lhs)?;
                self.expr(rhs)?;
                let (l, r) = (self.typed(lhs), self.typed(rhs));
                if l.int_value().is_none() && !matches!(l, Ty::Int(_) | Ty::Float)
                    || r.int_value().is_none() && !matches!(r, Ty::Int(_) | Ty::Float)
                {
                    return Err(err(e.span, "an `if` compares scalars"));
                }
                Ty::Bool
            }
            ExprKind::Load {
                tensor, indices, ..
            } => {
                let (dtype, dims): (DType, Vec<Dim>) = match self.env.get(tensor.as_str()) {
                    Some(Ty::HostTensor { dtype, shape, .. }) => {
                        (*dtype, shape.iter().map(|&d| Dim::fixed(d)).collect())
                    }
                    _ => return Err(err(e.span, format!("`{tensor}` is not a host tensor"))),
                };
                Ty::Tensor {
                    dtype,
                    dims: self.index(&dims, indices, e.span)?,
                }
            }
            ExprKind::Subscript { value, indices } => {
                let (dtype, dims) = match self.expr(value)? {
                    Ty::Tensor { dtype, dims } => (*dtype, dims.clone()),
                    other => {
                        return Err(err(
                            e.span,
                            format!("subscript of a non-tensor ({other:?})"),
                        ));
                    }
                };
                Ty::Tensor {
                    dtype,
                    dims: self.index(&dims, indices, e.span)?,
                }
            }
            ExprKind::Arange { start, end, step } => {
                let s = match start {
                    Some(s) => self.expr(s)?.int_value(),
                    None => Some(Affine::constant(0)),
                };
                let en = self.expr(end)?.int_value();
                let st = match step {
                    Some(s) => self.expr(s)?.const_int(),
                    None => Some(1),
                };
                let len = match (s, en, st) {
                    (Some(s), Some(en), Some(st)) if st > 0 => en
                        .sub(&s)
                        .as_const()
                        .map(|d| (d + st - 1).div_euclid(st).max(0)),
                    _ => None,
                };
                let len = len.ok_or_else(|| err(e.span, "hl.arange needs a static length"))?;
                Ty::Tensor {
                    dtype: DType::Int32,
                    dims: vec![Dim::fixed(len)],
                }
            }
            ExprKind::Zeros { shape, dtype } | ExprKind::Full { shape, dtype, .. } => {
                if let ExprKind::Full { value, .. } = &e.kind {
                    self.expr(value)?;
                }
                let dims = shape
                    .iter()
                    .map(|d| self.dim_arg(d))
                    .collect::<Result<_, _>>()?;
                Ty::Tensor {
                    dtype: *dtype,
                    dims,
                }
            }
            ExprKind::Cast { value, dtype } => match self.expr(value)? {
                Ty::Tensor { dims, .. } | Ty::Mask { dims } => Ty::Tensor {
                    dtype: *dtype,
                    dims: dims.clone(),
                },
                other => return Err(err(e.span, format!("cast of a non-tensor ({other:?})"))),
            },
            ExprKind::Sum { value, dim } => match self.expr(value)? {
                Ty::Tensor { dtype, dims } => {
                    let r = dims.len() as i64;
                    let d = if *dim < 0 { dim + r } else { *dim };
                    if !(0..r).contains(&d) {
                        return Err(err(
                            e.span,
                            format!("sum over dim {dim} of a rank-{r} tensor"),
                        ));
                    }
                    let mut dims = dims.clone();
                    dims.remove(d as usize);
                    Ty::Tensor {
                        dtype: *dtype,
                        dims,
                    }
                }
                other => return Err(err(e.span, format!("sum of a non-tensor ({other:?})"))),
            },
            ExprKind::View { value, op } => {
                let base = self.expr(value)?.clone();
                match base {
                    Ty::HostTensor { .. } => {
                        if let ViewOp::ViewAs(o) = op {
                            self.expr(o)?;
                        }
                        // Host views are aliases; the assignment takes their shape from the
                        // host environment (see `stmt`).
                        return Ok(base);
                    }
                    Ty::Tensor { dtype, dims } => Ty::Tensor {
                        dtype,
                        dims: self.view(&dims, op, e.span)?,
                    },
                    other => return Err(err(e.span, format!("view of a non-tensor ({other:?})"))),
                }
            }
            ExprKind::Permute { value, dims: perm } => match self.expr(value)? {
                Ty::Tensor { dtype, dims } => {
                    let r = dims.len();
                    let mut seen = vec![false; r];
                    let mut out = Vec::with_capacity(r);
                    for &p in perm {
                        let p = if p < 0 { p + r as i64 } else { p };
                        let Some(i) = usize::try_from(p).ok().filter(|&i| i < r && !seen[i]) else {
                            return Err(err(
                                e.span,
                                format!("permute {perm:?} is not a permutation of {r} dims"),
                            ));
                        };
                        seen[i] = true;
                        out.push(dims[i]);
                    }
                    if out.len() != r {
                        return Err(err(
                            e.span,
                            format!("permute {perm:?} is not a permutation of {r} dims"),
                        ));
                    }
                    Ty::Tensor {
                        dtype: *dtype,
                        dims: out,
                    }
                }
                other => return Err(err(e.span, format!("permute of a non-tensor ({other:?})"))),
            },
            ExprKind::Op { op, args } => {
                for a in args {
                    self.expr(a)?;
                }
                let tys: Vec<&Ty> = args.iter().map(|a| self.typed(a)).collect();
                self.op(op, &tys, e.span)?
            }
            ExprKind::Alloc { shape, dtype, .. } => {
                match shape {
                    AllocShape::Dims(d) => d.iter().try_for_each(|x| self.expr(x).map(|_| ()))?,
                    AllocShape::Like(t) => {
                        self.expr(t)?;
                    }
                }
                let _ = dtype;
                // The host environment already resolved the allocation; the assignment's name
                // carries it. The expression itself types as that host tensor where it is bound.
                Ty::Int(None)
            }
        })
    }

    /// An arithmetic operator on two operands. Two tensors whose shapes differ only in
    /// symbolic sizes (literal slices of tiled dims) trace, as in Helion, and their mismatch
    /// is deferred to codegen ([`Types::deferred`]).
    pub(super) fn binary(&self, op: BinOp, l: &Ty, r: &Ty, span: Span) -> Result<Ty, TypeError> {
        let li = l.int_value();
        let ri = r.int_value();
        Ok(match (l, r) {
            (Ty::Tensor { dtype: a, dims: da }, Ty::Tensor { dtype: b, dims: db }) => {
                let mismatch = || {
                    err(
                        span,
                        format!(
                            "shapes {} and {} do not broadcast",
                            shape_repr(da),
                            shape_repr(db)
                        ),
                    )
                };
                let dims = match self.broadcast_pointwise(da, db) {
                    Pointwise::Broadcast(dims) => dims,
                    Pointwise::SymbolicMismatch(dims) => {
                        // Only the first, in program order, is Helion's refusal.
                        let _ = self.deferred.set(mismatch());
                        dims
                    }
                    Pointwise::Mismatch => return Err(mismatch()),
                };
                let mut dtype = promote(*a, *b);
                if op == BinOp::Div && dtype == DType::Int32 {
                    dtype = DType::Float32;
                }
                Ty::Tensor { dtype, dims }
            }
            (Ty::Tensor { dtype, dims }, s) | (s, Ty::Tensor { dtype, dims }) => {
                let float_scalar = matches!(s, Ty::Float);
                let scalar_ok = float_scalar || s.int_value().is_some() || matches!(s, Ty::Int(_));
                if !scalar_ok {
                    return Err(err(span, format!("cannot combine a tensor with {s:?}")));
                }
                let dtype = if *dtype == DType::Int32 && (float_scalar || op == BinOp::Div) {
                    DType::Float32
                } else {
                    *dtype
                };
                Ty::Tensor {
                    dtype,
                    dims: dims.clone(),
                }
            }
            (Ty::Float, _) | (_, Ty::Float) => Ty::Float,
            _ if li.is_some() || ri.is_some() || matches!((l, r), (Ty::Int(_), Ty::Int(_))) => {
                if !matches!(l, Ty::Int(_) | Ty::GridIndex(_))
                    || !matches!(r, Ty::Int(_) | Ty::GridIndex(_))
                {
                    return Err(err(
                        span,
                        format!("cannot apply `{}` to {l:?} and {r:?}", op.symbol()),
                    ));
                }
                match op {
                    BinOp::Div => Ty::Float,
                    BinOp::Add => Ty::Int(li.zip(ri).map(|(a, b)| a.add(&b))),
                    BinOp::Sub => Ty::Int(li.zip(ri).map(|(a, b)| a.sub(&b))),
                    BinOp::Mul => Ty::Int(li.zip(ri).and_then(|(a, b)| a.mul(&b))),
                    BinOp::FloorDiv => Ty::Int(li.zip(ri).and_then(|(a, b)| a.floor_div(&b))),
                }
            }
            _ => {
                return Err(err(
                    span,
                    format!("cannot apply `{}` to {l:?} and {r:?}", op.symbol()),
                ));
            }
        })
    }
}
