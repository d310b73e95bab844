//! Subscripts: evaluating an index list to [`Ix`] entries (tiles as the slice of their live
//! rows, integer tensors as gathers, the slice-step check) and subscripting a host tensor or a
//! device value with them. The selection itself (torch's indexing rules) is
//! [`crate::index`]'s.

use super::{Runtime, Value};
use crate::Divergence;
use crate::dense::{DTensor, fresh_alias};
use crate::error::{EvalErrorKind as K, Res, err};
use crate::index::{Ix, select, tile_broadcast};
use crate::plan::{CExpr, CIndex};
use lang::ir::Span;
use std::rc::Rc;

impl Runtime<'_> {
    pub(super) fn indices(&mut self, ixs: &[CIndex]) -> Res<Vec<Ix>> {
        let mut out = Vec::with_capacity(ixs.len());
        for ix in ixs {
            out.push(match ix {
                CIndex::Full => Ix::Full,
                CIndex::NewAxis => Ix::NewAxis,
                CIndex::Int(i) => Ix::Int(*i),
                CIndex::Slice(a, b, c) => {
                    let mut bound = |e: &Option<CExpr>| -> Res<Option<i64>> {
                        e.as_ref()
                            .map(|e| self.eval_index_int(e, "a slice bound"))
                            .transpose()
                    };
                    let (start, stop, step) = (bound(a)?, bound(b)?, bound(c)?);
                    let step = step.unwrap_or(1);
                    if step <= 0 {
                        let span = c.as_ref().map_or(Span::default(), |e| e.span);
                        return err(
                            K::InvalidArgument,
                            span,
                            format!("slice step must be positive, got {step}"),
                        );
                    }
                    Ix::Slice { start, stop, step }
                }
                CIndex::Expr(e) => {
                    let v = self.eval(e)?;
                    self.index_entry(v, e.span)?
                }
            });
        }
        Ok(out)
    }

    fn index_entry(&mut self, v: Value, span: Span) -> Res<Ix> {
        let t = match v {
            Value::Tile(t) => {
                return Ok(Ix::Tile {
                    begin: t.begin,
                    end: t.end,
                });
            }
            Value::Int(i) => return Ok(Ix::Int(i)),
            Value::Float(_) => {
                return err(
                    K::TypeError,
                    span,
                    "only integers, slices, None and integer tensors are valid indices",
                );
            }
            v @ (Value::Tensor(_) | Value::Host(_)) => self.tensor_of(v, "an index", span)?,
        };
        if t.ty.is_float() {
            return err(
                K::TypeError,
                span,
                format!(
                    "tensors used as indices must be integer, got {}",
                    t.ty.name()
                ),
            );
        }
        if t.shape().is_empty() {
            return Ok(Ix::Int(t.values()[0] as i64));
        }
        Ok(Ix::Tensor(t))
    }

    /// Records [`Divergence::NegativeIndexClamped`] when an integer-tensor index of a read has
    /// a negative entry (Helion's eager mode clamps it, torch wraps it; the read is torch's).
    fn note_negative_index(&mut self, ixs: &[Ix], span: Span) {
        let negative = ixs.iter().any(|ix| match ix {
            Ix::Tensor(t) => t.values().iter().any(|&v| v < 0.0),
            Ix::Full | Ix::NewAxis | Ix::Int(_) | Ix::Slice { .. } | Ix::Tile { .. } => false,
        });
        let d = Divergence::NegativeIndexClamped { span };
        if negative && !self.divergences.contains(&d) {
            self.divergences.push(d);
        }
    }

    pub(super) fn index(&mut self, base: Value, ixs: &[Ix], span: Span) -> Res<Value> {
        if self.plan.tiling == crate::plan::Tiling::HelionEager {
            self.note_negative_index(ixs, span);
        }
        match base {
            Value::Host(h) => {
                let mut ixs = ixs.to_vec();
                tile_broadcast(&h.shape, &mut ixs);
                let sel = select(&h.shape, &ixs, span)?;
                self.charge(sel.numel(), span)?;
                let data = self.host_gather(&h, &sel, span)?;
                // A load: a fresh value, not a view (`DTensor::alias`).
                Ok(Value::Tensor(Rc::new(DTensor {
                    ty: self.storages[h.storage].ty,
                    data,
                    alias: fresh_alias(),
                })))
            }
            Value::Tensor(t) => {
                let sel = select(t.shape(), ixs, span)?;
                self.charge(sel.numel(), span)?;
                let data = sel.gather(t.data.view());
                let alias = if sel.basic { t.alias } else { fresh_alias() };
                Ok(Value::Tensor(Rc::new(DTensor {
                    ty: t.ty,
                    data,
                    alias,
                })))
            }
            other => err(
                K::TypeError,
                span,
                format!("{} is not subscriptable", other.kind_name()),
            ),
        }
    }
}
