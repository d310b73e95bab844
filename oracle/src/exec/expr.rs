//! Expressions: names and literals, `.size`, tile attributes, arithmetic with torch's promotion
//! (Python scalar arithmetic included), comparisons, `hl.arange`, `hl.full`, casts, `.sum`,
//! views (`reshape`, `squeeze`, `unsqueeze`, `view_as`) and `.permute`. Subscripts are
//! [`super::subscript`]'s, allocations [`super::host`]'s.

use super::{HostRef, Runtime, Value, cdiv_span};
use crate::dense::{self, DTensor, MAX_NUMEL, Opnd, Scalar, cast_value, norm_dim, reshape_shape};
use crate::error::{EvalErrorKind as K, Res, err};
use crate::plan::{CExpr, CK, CView};
use crate::ty::{I64_EXACT, Ty};
use lang::ir::{BinOp, CmpOp, Span, TileAttr};
use ndarray::{ArrayD, IxDyn};
use std::rc::Rc;

fn py_floor_div(a: i64, b: i64) -> i64 {
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// Python float/int arithmetic on scalars.
fn scalar_binary(op: BinOp, a: Scalar, b: Scalar, span: Span) -> Res<Value> {
    match (a, b) {
        (Scalar::Int(x), Scalar::Int(y)) => {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => {
                    if y == 0 {
                        return err(K::DivisionByZero, span, "division by zero");
                    }
                    return Ok(Value::Float(x as f64 / y as f64));
                }
                BinOp::FloorDiv => {
                    if y == 0 {
                        return err(K::DivisionByZero, span, "integer division by zero");
                    }
                    x.checked_div(y).map(|_| py_floor_div(x, y))
                }
            };
            r.map(Value::Int).ok_or_else(|| {
                crate::EvalError::new(K::Overflow, span, "int arithmetic overflows i64")
            })
        }
        _ => {
            let f = |s: Scalar| match s {
                Scalar::Int(i) => i as f64,
                Scalar::Float(v) => v,
            };
            let (x, y) = (f(a), f(b));
            let divides = match op {
                BinOp::Div | BinOp::FloorDiv => true,
                BinOp::Add | BinOp::Sub | BinOp::Mul => false,
            };
            if divides && y == 0.0 {
                return err(K::DivisionByZero, span, "float division by zero");
            }
            Ok(Value::Float(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::FloorDiv => dense::float_floor_div(x, y, |v| v),
            }))
        }
    }
}

impl Runtime<'_> {
    pub(super) fn eval(&mut self, e: &CExpr) -> Res<Value> {
        let span = e.span;
        Ok(match &e.kind {
            CK::Name(s) => self.get(*s, span)?,
            CK::Int(v) => Value::Int(*v),
            CK::Float(v) => Value::Float(*v),
            CK::Size(v, dim) => self.size(v, *dim, span)?,
            CK::TileAttr(slot, attr) => {
                let t = match self.get(*slot, span)? {
                    Value::Tile(t) => t,
                    other => {
                        return err(
                            K::TypeError,
                            span,
                            format!(".{} of {}", attr.name(), other.kind_name()),
                        );
                    }
                };
                match attr {
                    TileAttr::Begin => Value::Int(t.begin),
                    TileAttr::End => Value::Int(t.end),
                    TileAttr::BlockSize => Value::Int(t.block),
                    TileAttr::Count => Value::Int(cdiv_span(t.loop_begin, t.loop_end, t.block)),
                    TileAttr::Id => Value::Int(t.begin.div_euclid(t.block)),
                    TileAttr::Index => {
                        let n = (t.end - t.begin).max(0) as usize;
                        self.charge(n, span)?;
                        let data = (t.begin..t.end).map(|i| i as f64).collect();
                        Value::Tensor(Rc::new(DTensor::from_vec(Ty::I32, &[n], data)))
                    }
                }
            }
            CK::Binary(op, l, r) => {
                let a = self.eval(l)?;
                let b = self.eval(r)?;
                self.binary(*op, a, b, span)?
            }
            CK::Compare(op, l, r) => {
                let a = self.eval(l)?;
                let b = self.eval(r)?;
                Value::Int(i64::from(self.compare(*op, a, b, span)?))
            }
            CK::Index(base, ixs) => {
                let b = self.eval(base)?;
                let ixs = self.indices(ixs)?;
                self.index(b, &ixs, span)?
            }
            CK::Arange(start, end, step) => {
                self.arange(start.as_deref(), end, step.as_deref(), span)?
            }
            CK::Full(shape, value, ty) => self.full(shape, value.as_deref(), *ty, span)?,
            CK::Cast(v, ty) => {
                let v = self.eval(v)?;
                let t = self.tensor_of(v, "a cast", span)?;
                let t = Rc::try_unwrap(t).unwrap_or_else(|t| (*t).clone());
                if t.ty != *ty {
                    self.charge(t.numel(), span)?;
                }
                Value::Tensor(Rc::new(dense::cast(t, *ty, span)?))
            }
            CK::Sum(v, dim) => self.sum(v, *dim, span)?,
            CK::View(v, op) => {
                let v = self.eval(v)?;
                self.view(v, op, span)?
            }
            CK::Permute(v, dims) => {
                let v = self.eval(v)?;
                let t = self.tensor_of(v, ".permute", span)?;
                self.charge(t.numel(), span)?;
                Value::Tensor(Rc::new(dense::permute(&t, dims, span)?))
            }
            CK::Alloc(kind, shape, dtype) => self.alloc(*kind, shape, *dtype, span)?,
            CK::Op(op, args) => {
                let mut vs = Vec::with_capacity(args.len());
                for a in args {
                    vs.push(self.eval(a)?);
                }
                self.op(op, vs, span)?
            }
        })
    }

    // The arms of `eval` below are rare per loop iteration (once per case or per loop) and
    // long (their error messages): kept out of line, so the hot dispatch of `eval` (names,
    // tile attributes, arithmetic, subscripts) stays compact in the instruction cache
    // (callgrind `--cache-sim=yes`, 2026-12-05).

    /// `v.size(dim)`.
    #[inline(never)]
    fn size(&mut self, v: &CExpr, dim: i64, span: Span) -> Res<Value> {
        let v = self.eval(v)?;
        let shape: Vec<usize> = match &v {
            Value::Tensor(t) => t.shape().to_vec(),
            Value::Host(h) => h.shape.to_vec(),
            other => {
                return err(
                    K::TypeError,
                    span,
                    format!(".size() of {}", other.kind_name()),
                );
            }
        };
        if shape.is_empty() {
            return err(K::IndexOutOfRange, span, ".size(dim) of a 0-dim tensor");
        }
        let d = norm_dim(dim, shape.len(), 0, ".size", span).map_err(|mut x| {
            x.kind = K::IndexOutOfRange;
            x
        })?;
        Ok(Value::Int(shape[d] as i64))
    }

    /// `hl.arange(start, end, step)`.
    #[inline(never)]
    fn arange(
        &mut self,
        start: Option<&CExpr>,
        end: &CExpr,
        step: Option<&CExpr>,
        span: Span,
    ) -> Res<Value> {
        let s = match start {
            Some(x) => self.eval_index_int(x, "hl.arange")?,
            None => 0,
        };
        let en = self.eval_index_int(end, "hl.arange")?;
        let st = match step {
            Some(x) => self.eval_index_int(x, "hl.arange")?,
            None => 1,
        };
        if st == 0 {
            return err(K::InvalidArgument, span, "hl.arange step must be non-zero");
        }
        let (s1, e1, st1) = (i128::from(s), i128::from(en), i128::from(st));
        let width = e1 - s1;
        if width != 0 && (width > 0) != (st1 > 0) {
            return err(
                K::InvalidArgument,
                span,
                format!(
                    "hl.arange({s}, {en}, {st}): upper bound and larger bound inconsistent with step sign"
                ),
            );
        }
        let n = (width.abs() + st1.abs() - 1) / st1.abs();
        if n > MAX_NUMEL as i128 {
            return err(
                K::Budget,
                span,
                format!("hl.arange of {n} elements exceeds the budget"),
            );
        }
        let n = n as usize;
        self.charge(n, span)?;
        let mut data = Vec::with_capacity(n);
        for k in 0..n as i128 {
            let v = s1 + k * st1;
            if i32::try_from(v).is_err() {
                return err(
                    K::Overflow,
                    span,
                    "hl.arange values do not fit the int32 index dtype",
                );
            }
            data.push(v as f64);
        }
        Ok(Value::Tensor(Rc::new(DTensor::from_vec(
            Ty::I32,
            &[n],
            data,
        ))))
    }

    /// `hl.full(shape, value, dtype)` (`hl.zeros` without a value).
    #[inline(never)]
    fn full(&mut self, shape: &[CExpr], value: Option<&CExpr>, ty: Ty, span: Span) -> Res<Value> {
        let shape = self.shape_list(shape, span)?;
        let n = shape.iter().product::<usize>();
        let fill = match value {
            None => 0.0,
            Some(v) => {
                let v = self.eval(v)?;
                let (x, from) = match v {
                    Value::Int(i) => (i as f64, Ty::I64),
                    Value::Float(f) => (f, Ty::F32),
                    Value::Tensor(t) if t.numel() == 1 => (t.values()[0], t.ty),
                    other => {
                        return err(
                            K::TypeError,
                            span,
                            format!("hl.full fill value is {}", other.kind_name()),
                        );
                    }
                };
                cast_value(x, from, ty, span)?
            }
        };
        self.charge(n, span)?;
        Ok(Value::Tensor(Rc::new(DTensor::new(
            ty,
            ArrayD::from_elem(IxDyn(&shape), fill),
        ))))
    }

    /// `v.sum(dim)`.
    #[inline(never)]
    fn sum(&mut self, v: &CExpr, dim: i64, span: Span) -> Res<Value> {
        let v = self.eval(v)?;
        let t = self.tensor_of(v, ".sum", span)?;
        let d = norm_dim(dim, t.shape().len(), 0, ".sum", span)?;
        self.charge(t.numel(), span)?;
        if t.shape().is_empty() {
            let ty = if t.ty.is_float() { t.ty } else { Ty::I64 };
            Ok(Value::Tensor(Rc::new(DTensor::new(ty, t.data.clone()))))
        } else {
            let (ty, data) = crate::sum::sum_dim(t.ty, &t.data, d);
            if !ty.is_float() && data.iter().any(|v| v.abs() > I64_EXACT) {
                return err(
                    K::Overflow,
                    span,
                    "an int64 sum leaves the exact range ±2^53",
                );
            }
            Ok(Value::Tensor(Rc::new(DTensor::new(ty, data))))
        }
    }

    pub(super) fn shape_list(&mut self, dims: &[CExpr], span: Span) -> Res<Vec<usize>> {
        let mut shape = Vec::with_capacity(dims.len());
        for d in dims {
            let n = match self.eval(d)? {
                Value::Tile(t) => t.end - t.begin,
                v => self.int_of(v, "a size", d.span)?,
            };
            if n < 0 {
                return err(
                    K::InvalidArgument,
                    d.span,
                    format!("negative dimension {n}"),
                );
            }
            shape.push(n as usize);
        }
        let numel = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if numel.is_none_or(|n| n > MAX_NUMEL) {
            return err(
                K::Budget,
                span,
                format!("a tensor of shape {shape:?} exceeds the budget"),
            );
        }
        Ok(shape)
    }

    fn view(&mut self, v: Value, op: &CView, span: Span) -> Res<Value> {
        let (shape, numel): (Vec<usize>, usize) = match &v {
            Value::Tensor(t) => (t.shape().to_vec(), t.numel()),
            Value::Host(h) => (h.shape.to_vec(), h.shape.iter().product()),
            other => {
                return err(
                    K::TypeError,
                    span,
                    format!("a view of {}", other.kind_name()),
                );
            }
        };
        let new_shape = match op {
            CView::Reshape(dims) => {
                let mut ds = Vec::with_capacity(dims.len());
                for d in dims {
                    ds.push(self.eval_index_int(d, "a reshape dim")?);
                }
                reshape_shape(numel, &shape, &ds, span)?
            }
            CView::Squeeze(d) => {
                let mut s = shape.clone();
                if !s.is_empty() {
                    let d = norm_dim(*d, s.len(), 0, ".squeeze", span)?;
                    if s[d] == 1 {
                        s.remove(d);
                    }
                } else {
                    norm_dim(*d, 0, 0, ".squeeze", span)?;
                }
                s
            }
            CView::Unsqueeze(d) => {
                let mut s = shape.clone();
                let d = norm_dim(*d, s.len(), 1, ".unsqueeze", span)?;
                s.insert(d, 1);
                s
            }
            CView::ViewAs(o) => {
                let other = match self.eval(o)? {
                    Value::Tensor(t) => t.shape().to_vec(),
                    Value::Host(h) => h.shape.to_vec(),
                    other => {
                        return err(
                            K::TypeError,
                            span,
                            format!(".view_as({})", other.kind_name()),
                        );
                    }
                };
                if other.iter().product::<usize>() != numel {
                    return err(
                        K::ShapeMismatch,
                        span,
                        format!("view_as: {shape:?} cannot be viewed as {other:?}"),
                    );
                }
                other
            }
        };
        Ok(match v {
            Value::Tensor(t) => {
                let t = Rc::try_unwrap(t).unwrap_or_else(|t| (*t).clone());
                Value::Tensor(Rc::new(DTensor {
                    ty: t.ty,
                    data: t
                        .data
                        .into_shape_with_order(IxDyn(&new_shape))
                        .expect("a reshape keeps the element count of a standard array"),
                    alias: t.alias,
                }))
            }
            Value::Host(h) => Value::Host(HostRef {
                storage: h.storage,
                shape: Rc::new(new_shape),
            }),
            _ => unreachable!("checked above"),
        })
    }

    pub(super) fn binary(&mut self, op: BinOp, a: Value, b: Value, span: Span) -> Res<Value> {
        let scalar = |v: &Value| match v {
            Value::Int(i) => Some(Scalar::Int(*i)),
            Value::Float(f) => Some(Scalar::Float(*f)),
            _ => None,
        };
        if let (Some(x), Some(y)) = (scalar(&a), scalar(&b)) {
            return scalar_binary(op, x, y, span);
        }
        for v in [&a, &b] {
            if let Value::Tile(_) = v {
                return err(
                    K::TypeError,
                    span,
                    "a tile cannot take part in arithmetic (use .begin, .end, .index)",
                );
            }
        }
        let ta = match scalar(&a) {
            Some(_) => None,
            None => Some(self.tensor_of(a.clone(), "arithmetic", span)?),
        };
        let tb = match scalar(&b) {
            Some(_) => None,
            None => Some(self.tensor_of(b.clone(), "arithmetic", span)?),
        };
        let oa = ta
            .as_deref()
            .map_or_else(|| Opnd::S(scalar(&a).expect("scalar")), Opnd::T);
        let ob = tb
            .as_deref()
            .map_or_else(|| Opnd::S(scalar(&b).expect("scalar")), Opnd::T);
        let r = dense::binary(op, oa, ob, span)?;
        self.charge(r.numel(), span)?;
        Ok(Value::Tensor(Rc::new(r)))
    }

    pub(super) fn compare(&self, op: CmpOp, a: Value, b: Value, span: Span) -> Res<bool> {
        let (x, xi) = self.scalar_of(a, span)?;
        let (y, yi) = self.scalar_of(b, span)?;
        if let (Some(p), Some(q)) = (xi, yi) {
            return Ok(op.eval(p, q));
        }
        Ok(match op {
            CmpOp::Ge => x >= y,
            CmpOp::Gt => x > y,
            CmpOp::Le => x <= y,
            CmpOp::Lt => x < y,
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
        })
    }
}
