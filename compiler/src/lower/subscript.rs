//! Subscripts and views of device values (spec §2.10, §3.3, §3.4): narrowing subscripts of
//! resident Refs as the plan's selector decides them, resident views (Ref reshapes), the
//! static-value fallback, and non-narrowing subscripts of values.

use super::{Env, LResult, Lowerer, gap};
use crate::decisions::node_decision;
use crate::plan::{SelectorBegin, SelectorKind};
use lang::ir::{BinOp, Expr, ExprKind, Index};
use lang::pallas::{self, Expr as P, IndexPart, Jnp};
use lang::tensor::DType;

type PStmt = pallas::Stmt;

impl Lowerer<'_> {
    /// A resident view (spec §3.3): `<ref>.reshape((d0, ...))`, plus `[...]` when it
    /// materializes.
    pub(super) fn lower_resident_view(
        &mut self,
        e: &Expr,
        value: &Expr,
        env: &Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<P> {
        let Some(p) = self.plan.resident(e).cloned() else {
            return gap(e.span, "a view without a plan");
        };
        let Some(variant) = p.variants.first() else {
            return gap(e.span, "a resident view without a variant");
        };
        let base = self.lower_expr(value, env, out)?;
        let plain =
            node_decision(e, self.plan).is_some_and(|(d, _)| self.options.plain.contains(d));
        if p.materialize && plain {
            // The plain path (`PlainSet`): the whole Ref read, then a value reshape.
            return Ok(Jnp::Reshape {
                x: Box::new(base.index(vec![IndexPart::Ellipsis])),
                shape: variant.shape.clone(),
            }
            .into());
        }
        let v = P::RefReshape {
            base: Box::new(base),
            shape: variant.shape.clone(),
        };
        Ok(if p.materialize {
            v.index(vec![IndexPart::Ellipsis])
        } else {
            v
        })
    }

    /// A subscript of a device value (spec §3.4).
    pub(super) fn lower_subscript(
        &mut self,
        e: &Expr,
        value: &Expr,
        indices: &[Index],
        env: &Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<P> {
        if let Some(p) = self.plan.resident(e).cloned() {
            let Some(s) = p.selector.clone() else {
                // A `None`/`:` subscript of a Ref: a Ref reshape to the physical shape.
                return self.lower_resident_view(e, value, env, out);
            };
            let (Some(iv), Some(ov)) = (p.input_variants.first(), p.variants.first()) else {
                return gap(e.span, "a resident subscript without variants");
            };
            let Some(phys) = iv.physical_dim(s.logical_dim) else {
                return gap(e.span, "a selector dim outside the Ref");
            };
            let extent = iv.shape.get(phys).copied().unwrap_or(0);
            let begin = match (s.kind, &s.begin) {
                (SelectorKind::Tile, _) => {
                    let Some(ld) = s.local_block.and_then(|b| self.loops.get(&b)) else {
                        return gap(e.span, "a tile selector outside its loop");
                    };
                    if s.mask
                        && self
                            .options
                            .faults
                            .has(crate::faults::Fault::D12TailClampedBeforeMask)
                    {
                        // Fault D12 (761bbc4c): `dynamic_slice_in_dim` on the live rows, so the
                        // start is pulled back to `end - width` before the mask is applied.
                        let _ = extent;
                        Jnp::Clip {
                            x: Box::new(P::name(&ld.offset)),
                            lo: Box::new(P::Int(0)),
                            hi: Box::new(ld.end.clone().minus(P::Int(s.width))),
                        }
                        .into()
                    } else {
                        P::name(&ld.offset)
                    }
                }
                (SelectorKind::Tail, begin) => {
                    let start = match begin {
                        SelectorBegin::Static(v) => P::Int(*v),
                        SelectorBegin::Symbolic(a) => {
                            let a = a.clone();
                            self.lower_affine(&a, e.span)?
                        }
                    };
                    let start = if start.is_atom() {
                        start
                    } else {
                        let n = self.fresh("sub_");
                        out.push(PStmt::Assign {
                            target: pallas::Target::Name(n.clone()),
                            value: start,
                        });
                        P::Name(n)
                    };
                    Jnp::Clip {
                        x: Box::new(start),
                        lo: Box::new(P::Int(0)),
                        hi: Box::new(P::Int(extent - s.width)),
                    }
                    .into()
                }
                (SelectorKind::Static, SelectorBegin::Static(v)) => P::Int(*v),
                (SelectorKind::Static, SelectorBegin::Symbolic(a)) => {
                    let a = a.clone();
                    self.lower_affine(&a, e.span)?
                }
            };
            let mut index = vec![IndexPart::Full; iv.shape.len()];
            index[phys] = IndexPart::Expr(P::ds(begin.clone(), P::Int(s.width)));
            let base = self.lower_expr(value, env, out)?;
            if !p.materialize {
                return Ok(base.at(index));
            }
            let plain =
                node_decision(e, self.plan).is_some_and(|(d, _)| self.options.plain.contains(d));
            let mut v = if plain {
                // The plain path (`PlainSet`): the whole Ref read, then the same run sliced
                // out of the value.
                Jnp::DynamicSliceInDim {
                    x: Box::new(base.index(vec![IndexPart::Ellipsis])),
                    start: Box::new(begin),
                    size: s.width,
                    axis: phys,
                }
                .into()
            } else {
                base.index(index)
            };
            if !ov.squeezed_dims.is_empty() {
                v = v.index(
                    (0..ov.shape.len())
                        .map(|d| {
                            if ov.squeezed_dims.contains(&d) {
                                IndexPart::Int(0)
                            } else {
                                IndexPart::Full
                            }
                        })
                        .collect(),
                );
            }
            if s.mask {
                let mask = s
                    .local_block
                    .and_then(|b| self.loops.get(&b))
                    .and_then(|ld| ld.mask.clone());
                if let Some(m) = mask {
                    let dtype = self.types.of(e).dtype().unwrap_or(DType::Float32);
                    let rank = ov.logical_shape().len();
                    v = self.apply_mask(v, &m, s.logical_dim, rank, dtype);
                }
            }
            return Ok(v);
        }
        if self.plan.is_static_value(e) {
            let parts = indices
                .iter()
                .map(|i| self.static_value_part(i, env))
                .collect::<Option<Vec<_>>>();
            let Some(parts) = parts else {
                return gap(
                    e.span,
                    "a static-value subscript whose indices are not static",
                );
            };
            let base = self.lower_expr(value, env, out)?;
            return Ok(base.index(parts));
        }
        if indices.iter().any(Index::is_narrowing) {
            return gap(
                e.span,
                "a narrowing subscript with neither a resident plan nor the static-value fallback",
            );
        }
        if self.is_ref(value, env) {
            return gap(e.span, "a subscript of a resident Ref without a plan");
        }
        let base = self.lower_expr(value, env, out)?;
        let parts = indices
            .iter()
            .map(|i| match i {
                Index::NewAxis => IndexPart::NewAxis,
                Index::Full | Index::Int(_) | Index::Slice { .. } | Index::Expr(_) => {
                    IndexPart::Full
                }
            })
            .collect();
        Ok(base.index(parts))
    }

    /// One entry of a static basic-indexing subscript on a value (spec §2.10, db0613ca).
    fn static_value_part(&self, index: &Index, env: &Env) -> Option<IndexPart> {
        match index {
            Index::Full => Some(IndexPart::Full),
            Index::NewAxis => Some(IndexPart::NewAxis),
            Index::Int(i) => Some(IndexPart::Int(*i)),
            Index::Slice { start, stop, step } => {
                if let Some(s) = step
                    && self.static_int(s, env) != Some(1)
                {
                    return None;
                }
                let start = match start {
                    Some(s) => Some(self.static_int(s, env)?),
                    None => None,
                };
                let stop = match stop {
                    Some(s) => Some(self.static_int(s, env)?),
                    None => None,
                };
                Some(IndexPart::Slice { start, stop })
            }
            Index::Expr(x) => {
                if let Some(v) = self.static_int(x, env) {
                    return Some(IndexPart::Int(v));
                }
                let (start, len) = self.static_range(x, env)?;
                Some(IndexPart::Slice {
                    start: Some(start),
                    stop: Some(start + len),
                })
            }
        }
    }

    /// `(start, length)` of a static contiguous range: `hl.arange(a, b)` with static bounds and
    /// step 1, shifted by static ints.
    fn static_range(&self, x: &Expr, env: &Env) -> Option<(i64, i64)> {
        match &x.kind {
            ExprKind::Arange { start, end, step } => {
                if let Some(s) = step
                    && self.static_int(s, env) != Some(1)
                {
                    return None;
                }
                let a = match start {
                    Some(s) => self.static_int(s, env)?,
                    None => 0,
                };
                let b = self.static_int(end, env)?;
                Some((a, (b - a).max(0)))
            }
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } => {
                if let Some(c) = self.static_int(lhs, env) {
                    let (s, n) = self.static_range(rhs, env)?;
                    Some((s + c, n))
                } else {
                    let c = self.static_int(rhs, env)?;
                    let (s, n) = self.static_range(lhs, env)?;
                    Some((s + c, n))
                }
            }
            ExprKind::Binary {
                op: BinOp::Sub,
                lhs,
                rhs,
            } => {
                let c = self.static_int(rhs, env)?;
                let (s, n) = self.static_range(lhs, env)?;
                Some((s - c, n))
            }
            ExprKind::Binary {
                op: BinOp::Mul | BinOp::Div | BinOp::FloorDiv,
                ..
            }
            | ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
            | ExprKind::TileAttr { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Load { .. }
            | ExprKind::Subscript { .. }
            | ExprKind::Zeros { .. }
            | ExprKind::Full { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Sum { .. }
            | ExprKind::View { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Op { .. }
            | ExprKind::Alloc { .. } => None,
        }
    }
}
