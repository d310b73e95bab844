//! Host memory: `torch.zeros`/`torch.empty(_like)` allocations, reads of storages (with the
//! never-written check), and the writes: stores (broadcast and cast as torch's setitem does) and
//! atomics, element by element in row-major order.

use super::{HostRef, Runtime, Storage, Value};
use crate::dense::{DTensor, broadcast_shapes, cast_value, fresh_alias, standard};
use crate::error::{EvalErrorKind as K, Res, err};
use crate::index::{Ix, Selection, select};
use crate::plan::{CAllocShape, CExpr};
use crate::ty::{Ty, r32, rbf, wrap32};
use lang::ir::{AllocKind, AtomicOp, Span};
use ndarray::{Array1, ArrayD, ArrayViewD, IxDyn, Zip};
use std::rc::Rc;
use std::sync::Arc;

/// `a + b` in type `ty` (`a` and `b` exact in `ty`), as an atomic add computes it.
fn add_in(ty: Ty, a: f64, b: f64) -> f64 {
    match ty {
        Ty::F32 => r32(a + b),
        Ty::Bf16 => rbf(a + b),
        Ty::I32 => wrap32(a + b),
        Ty::I64 => a + b,
        Ty::Bool => f64::from(u8::from(a + b != 0.0)),
    }
}

/// The values a store or an atomic writes, in the region's shape and the target's type: a
/// tensor's own array when it has both already (no copy), else a fresh one.
enum Stored {
    Tensor(Rc<DTensor>),
    Made(ArrayD<f64>),
}

impl Stored {
    fn view(&self) -> ArrayViewD<'_, f64> {
        match self {
            Stored::Tensor(t) => t.data.view(),
            Stored::Made(a) => a.view(),
        }
    }
}

impl Runtime<'_> {
    pub(super) fn host_target(&mut self, e: &CExpr) -> Res<HostRef> {
        match self.eval(e)? {
            Value::Host(h) => Ok(h),
            other => err(
                K::TypeError,
                e.span,
                format!(
                    "a store or atomic writes a host tensor, not {}",
                    other.kind_name()
                ),
            ),
        }
    }

    /// The elements of `h`'s storage seen with `h`'s shape.
    fn host_view(&self, h: &HostRef) -> ArrayViewD<'_, f64> {
        self.storages[h.storage]
            .data
            .view()
            .into_shape_with_order(IxDyn(&h.shape))
            .expect("a host tensor's shape has its storage's size")
    }

    pub(super) fn host_read_all(&self, h: &HostRef, span: Span) -> Res<DTensor> {
        let sel = select(&h.shape, &[], span)?;
        let data = self.host_gather(h, &sel, span)?;
        Ok(DTensor {
            ty: self.storages[h.storage].ty,
            data,
            alias: fresh_alias(),
        })
    }

    pub(super) fn host_gather(&self, h: &HostRef, sel: &Selection, span: Span) -> Res<ArrayD<f64>> {
        let s = &self.storages[h.storage];
        let count = if s.unwritten > 0 {
            let written = s
                .written
                .view()
                .into_shape_with_order(IxDyn(&h.shape))
                .expect("a host tensor's shape has its storage's size");
            sel.count_unwritten(written)
        } else {
            0
        };
        if count > 0 {
            return err(
                K::ReadUninitialized,
                span,
                format!(
                    "reads {count} element(s) of `{}` that were never written (torch.empty)",
                    s.name
                ),
            );
        }
        Ok(sel.gather(self.host_view(h)))
    }

    pub(super) fn alloc(
        &mut self,
        kind: AllocKind,
        shape: &CAllocShape,
        dtype: Option<lang::ir::DType>,
        span: Span,
    ) -> Res<Value> {
        let (shape, like_ty) = match shape {
            CAllocShape::Dims(d) => (self.shape_list(d, span)?, None),
            CAllocShape::Like(t) => match self.eval(t)? {
                Value::Host(h) => (h.shape.to_vec(), Some(self.storages[h.storage].ty)),
                Value::Tensor(t) => (t.shape().to_vec(), Some(t.ty)),
                other => {
                    return err(
                        K::TypeError,
                        span,
                        format!("*_like of {}", other.kind_name()),
                    );
                }
            },
        };
        let ty = dtype.map(Ty::of).or(like_ty).unwrap_or(Ty::F32);
        let Some(case_dtype) = ty.dtype() else {
            return err(
                K::TypeError,
                span,
                format!("cannot allocate an {} host tensor", ty.name()),
            );
        };
        let n: usize = shape.iter().product();
        self.charge(n, span)?;
        let (data, written, unwritten) = match kind {
            AllocKind::Zeros => (Array1::zeros(n), Array1::default(0), 0),
            AllocKind::Empty => (
                Array1::from_elem(n, lang::ir::inputs::poison(case_dtype)),
                Array1::from_elem(n, false),
                n,
            ),
        };
        self.storages.push(Storage {
            name: format!("allocation at {span}"),
            ty,
            data: Arc::new(data),
            written,
            unwritten,
        });
        Ok(Value::Host(HostRef {
            storage: self.storages.len() - 1,
            shape: Rc::new(shape),
        }))
    }

    /// The values of `v` broadcast to `shape` and cast to `ty`, as `tensor[idx] = v` does
    /// (leading size-1 dims of `v` are dropped first, as torch's setitem does).
    fn values_for(&self, v: Value, shape: &[usize], ty: Ty, span: Span) -> Res<Stored> {
        let t = match v {
            Value::Int(i) => {
                return Ok(Stored::Made(ArrayD::from_elem(
                    IxDyn(shape),
                    cast_value(i as f64, Ty::I64, ty, span)?,
                )));
            }
            Value::Float(f) => {
                return Ok(Stored::Made(ArrayD::from_elem(
                    IxDyn(shape),
                    cast_value(f, Ty::F32, ty, span)?,
                )));
            }
            Value::Tile(_) => return err(K::TypeError, span, "a tile cannot be stored"),
            Value::Tensor(t) => t,
            Value::Host(h) => Rc::new(self.host_read_all(&h, span)?),
        };
        let mut vshape: &[usize] = t.shape();
        while vshape.len() > shape.len() && vshape[0] == 1 {
            vshape = &vshape[1..];
        }
        let ok = vshape.len() <= shape.len()
            && broadcast_shapes(vshape, shape, span).is_ok_and(|b| b == shape);
        if !ok {
            return err(
                K::ShapeMismatch,
                span,
                format!(
                    "a value of shape {:?} cannot be stored into a region of shape {shape:?}",
                    t.shape()
                ),
            );
        }
        if t.shape() == shape && t.ty == ty {
            return Ok(Stored::Tensor(t));
        }
        let dropped = t
            .data
            .view()
            .into_shape_with_order(IxDyn(vshape))
            .expect("only size-1 dims dropped");
        let mut data = standard(
            dropped
                .broadcast(IxDyn(shape))
                .expect("checked by broadcast_shapes"),
        );
        if t.ty != ty {
            // Row-major, so the first value that cannot be cast is the one named.
            for x in data.iter_mut() {
                *x = cast_value(*x, t.ty, ty, span)?;
            }
        }
        Ok(Stored::Made(data))
    }

    pub(super) fn store(&mut self, h: &HostRef, ixs: &[Ix], v: Value, span: Span) -> Res<()> {
        let sel = select(&h.shape, ixs, span)?;
        let ty = self.storages[h.storage].ty;
        let vals = self.values_for(v, &sel.shape, ty, span)?;
        let vals = vals.view();
        self.charge(vals.len(), span)?;
        let s = &mut self.storages[h.storage];
        let shape = IxDyn(&h.shape);
        let data = Arc::make_mut(&mut s.data)
            .view_mut()
            .into_shape_with_order(shape.clone())
            .expect("a host tensor's shape has its storage's size");
        sel.zip_mut(data, vals.view(), |d, &x| *d = x);
        if s.unwritten > 0 {
            let written = s
                .written
                .view_mut()
                .into_shape_with_order(shape)
                .expect("a host tensor's shape has its storage's size");
            let unwritten = &mut s.unwritten;
            sel.zip_mut(written, vals.view(), |w, _| {
                if !*w {
                    *w = true;
                    *unwritten -= 1;
                }
            });
            if s.unwritten == 0 {
                s.written = Array1::default(0);
            }
        }
        Ok(())
    }

    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        h: &HostRef,
        ixs: &[Ix],
        expected: Option<Value>,
        v: Value,
        span: Span,
    ) -> Res<()> {
        let sel = select(&h.shape, ixs, span)?;
        let ty = self.storages[h.storage].ty;
        let bitwise = match op {
            AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => true,
            AtomicOp::Add | AtomicOp::Cas | AtomicOp::Max | AtomicOp::Min | AtomicOp::Xchg => false,
        };
        if bitwise {
            let float_value = match &v {
                Value::Float(_) => true,
                Value::Tensor(t) => t.ty.is_float(),
                Value::Host(hv) => self.storages[hv.storage].ty.is_float(),
                Value::Int(_) | Value::Tile(_) => false,
            };
            if ty.is_float() || float_value {
                return err(
                    K::TypeError,
                    span,
                    format!("hl.{} needs integer operands", op.name()),
                );
            }
        }
        // Reading the current values: they must have been written.
        self.host_gather(h, &sel, span)?;
        let vals = self.values_for(v, &sel.shape, ty, span)?;
        let vals = vals.view();
        let exp = match (op, expected) {
            (AtomicOp::Cas, Some(x)) => Some(self.values_for(x, &sel.shape, ty, span)?),
            (AtomicOp::Cas, None) => {
                return err(K::TypeError, span, "hl.atomic_cas needs an expected value");
            }
            (
                AtomicOp::Add
                | AtomicOp::And
                | AtomicOp::Max
                | AtomicOp::Min
                | AtomicOp::Or
                | AtomicOp::Xchg
                | AtomicOp::Xor,
                _,
            ) => None,
        };
        self.charge(vals.len(), span)?;
        // Each target element with its value and, for `cas`, its expected value.
        let pairs = match &exp {
            Some(e) => Zip::from(&vals).and(&e.view()).map_collect(|&x, &e| (x, e)),
            None => vals.mapv(|x| (x, 0.0)),
        };
        let s = &mut self.storages[h.storage];
        let data = Arc::make_mut(&mut s.data)
            .view_mut()
            .into_shape_with_order(IxDyn(&h.shape))
            .expect("a host tensor's shape has its storage's size");
        sel.zip_mut(data, pairs.view(), |d, &(x, e)| {
            let cur = *d;
            *d = match op {
                AtomicOp::Add => add_in(ty, cur, x),
                AtomicOp::And => ((cur as i64) & (x as i64)) as f64,
                AtomicOp::Or => ((cur as i64) | (x as i64)) as f64,
                AtomicOp::Xor => ((cur as i64) ^ (x as i64)) as f64,
                AtomicOp::Max if cur.is_nan() || x.is_nan() => f64::NAN,
                AtomicOp::Min if cur.is_nan() || x.is_nan() => f64::NAN,
                AtomicOp::Max => cur.max(x),
                AtomicOp::Min => cur.min(x),
                AtomicOp::Xchg => x,
                AtomicOp::Cas => {
                    if e == cur {
                        x
                    } else {
                        cur
                    }
                }
            };
        });
        Ok(())
    }
}
