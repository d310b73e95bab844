//! The reference's [`TensorOp`]s, torch's semantics on the case dtypes (a mask is
//! [`Ty::Bool`]):
//!
//! * `exp`, `rsqrt`: computed in f64 and rounded once to the result type (float32, or
//!   bfloat16 through float32; ints give float32). torch's kernels are not correctly rounded
//!   (a few ulps): the comparison's float tolerance covers it (`fuzz::compare`).
//! * `relu`, `maximum`, `minimum`: exact; NaN propagates. `%`: torch's `remainder` (and
//!   Python's `%` on scalars), the sign of the divisor; an int remainder by zero is
//!   `division-by-zero`. `&`, `|`: logical on masks, bitwise on ints; a float is a type error.
//! * Comparisons: in the promoted type of the operands (a Python float against a float32
//!   tensor is rounded to float32 first), giving a mask. `torch.where`: a mask condition, the
//!   values promoted as torch's `result_type`.
//! * `sum`/`amax`/`amin` over several dims or all: `sum` reduces one dim at a time, the
//!   highest first, each with `.sum`'s order (`crate::sum`), ints to int64; torch reduces the
//!   dims at once in its own order, so a float sum over several dims differs by rounding only.
//!   `amax`/`amin` are exact and refuse an empty reduction, as torch does.
//! * Matrix products: each dot product is summed in f64 (exact for the case sizes' float32
//!   and bfloat16 inputs up to rounding of the sum itself) and rounded once to the result type:
//!   float32 for `hl.dot` without an accumulator (Helion's `_compute_out_dtype`), the
//!   accumulator's dtype with one (then added to it in that dtype), the operands' dtype for
//!   the torch products; `addmm`/`baddbmm` add the bias in the result type. torch and XLA
//!   accumulate in float32 in an order of their own: the sum of the terms' magnitudes is
//!   recorded in the magnitude watermark, which scales the float32 `atol`.

use super::{Runtime, Value};
use crate::dense::{self, DTensor, Opnd, Scalar, broadcast_shapes, norm_dim, operand_values};
use crate::error::{EvalErrorKind as K, Res, err};
use crate::ty::{Ty, r32, rbf, result_type, wrap32};
use lang::ir::{CmpOp, ReduceKind, Span, TensorOp};
use ndarray::{ArrayD, Axis, IxDyn, Zip};
use std::rc::Rc;

/// An evaluated operand: a tensor or a Python scalar.
enum Arg {
    T(Rc<DTensor>),
    S(Scalar),
}

impl Arg {
    fn opnd(&self) -> Opnd<'_> {
        match self {
            Arg::T(t) => Opnd::T(t),
            Arg::S(s) => Opnd::S(*s),
        }
    }
}

fn round_to(ty: Ty) -> fn(f64) -> f64 {
    fn id(v: f64) -> f64 {
        v
    }
    match ty {
        Ty::F32 => r32,
        Ty::Bf16 => rbf,
        Ty::I32 => wrap32,
        Ty::I64 | Ty::Bool => id,
    }
}

/// `f` over the broadcast of `args`' values in type `c`.
fn zip_n(args: &[&Arg], c: Ty, span: Span, f: impl Fn(&[f64]) -> f64) -> Res<ArrayD<f64>> {
    let mut shape: Vec<usize> = Vec::new();
    for a in args {
        shape = broadcast_shapes(&shape, a.opnd().shape(), span)?;
    }
    let n: usize = shape.iter().product();
    if n > dense::MAX_NUMEL {
        return err(
            K::Budget,
            span,
            format!("a result of {n} elements exceeds the budget"),
        );
    }
    let vals = args
        .iter()
        .map(|a| operand_values(&a.opnd(), c, span))
        .collect::<Res<Vec<_>>>()?;
    let views = vals
        .iter()
        .map(|v| {
            v.broadcast(IxDyn(&shape))
                .expect("broadcast_shapes checked the shapes")
        })
        .collect::<Vec<_>>();
    let mut out = ArrayD::<f64>::zeros(IxDyn(&shape));
    let mut buf = vec![0.0; views.len()];
    for (idx, o) in out.indexed_iter_mut() {
        for (b, v) in buf.iter_mut().zip(&views) {
            *b = v[&idx];
        }
        *o = f(&buf);
    }
    Ok(out)
}

fn py_mod_int(x: i64, y: i64) -> i64 {
    let r = x.wrapping_rem(y);
    if r != 0 && ((r < 0) != (y < 0)) {
        r + y
    } else {
        r
    }
}

fn float_mod(x: f64, y: f64) -> f64 {
    let m = x % y;
    if m != 0.0 && ((m < 0.0) != (y < 0.0)) {
        m + y
    } else {
        m
    }
}

impl Runtime<'_> {
    fn arg(&mut self, v: Value, what: &str, span: Span) -> Res<Arg> {
        Ok(match v {
            Value::Int(i) => Arg::S(Scalar::Int(i)),
            Value::Float(f) => Arg::S(Scalar::Float(f)),
            other => Arg::T(self.tensor_of(other, what, span)?),
        })
    }

    fn tensor_arg(&mut self, v: Value, what: &str, span: Span) -> Res<Rc<DTensor>> {
        match v {
            Value::Int(_) | Value::Float(_) => err(
                K::TypeError,
                span,
                format!("{what} takes a tensor, not a Python number"),
            ),
            other => self.tensor_of(other, what, span),
        }
    }

    fn done(&mut self, t: DTensor, span: Span) -> Res<Value> {
        self.charge(t.numel(), span)?;
        Ok(Value::Tensor(Rc::new(t)))
    }

    pub(super) fn op(&mut self, op: &TensorOp, args: Vec<Value>, span: Span) -> Res<Value> {
        let what = op.construct();
        let (lo, hi) = op.arity();
        if !(lo..=hi).contains(&args.len()) {
            return err(
                K::TypeError,
                span,
                format!("{what} with {} operands", args.len()),
            );
        }
        let mut args = args.into_iter();
        let mut next = || args.next().expect("arity checked");
        match op {
            TensorOp::Exp | TensorOp::Rsqrt | TensorOp::Relu | TensorOp::Unary(_) => {
                let t = self.tensor_arg(next(), what, span)?;
                let ty = match op {
                    TensorOp::Relu => t.ty,
                    _ if t.ty.is_float() => t.ty,
                    _ => Ty::F32,
                };
                let r = round_to(ty);
                let unary = match op {
                    TensorOp::Unary(u) => Some(*u),
                    _ => None,
                };
                let f: fn(f64) -> f64 = match op {
                    TensorOp::Exp => f64::exp,
                    TensorOp::Rsqrt => |v| 1.0 / v.sqrt(),
                    _ => |v| if v.is_nan() || v > 0.0 { v } else { 0.0 },
                };
                let data = match unary {
                    Some(u) => t.data.mapv(|v| r(u.apply(v))),
                    None => t.data.mapv(|v| r(f(v))),
                };
                self.done(DTensor::new(ty, data), span)
            }
            TensorOp::Maximum | TensorOp::Minimum => {
                let a = Arg::T(self.tensor_arg(next(), what, span)?);
                let b = Arg::T(self.tensor_arg(next(), what, span)?);
                let c = result_type(&[a.opnd().operand(), b.opnd().operand()]);
                let max = matches!(op, TensorOp::Maximum);
                let data = zip_n(&[&a, &b], c, span, |v| {
                    let (x, y) = (v[0], v[1]);
                    if x.is_nan() || y.is_nan() {
                        f64::NAN
                    } else if (x > y) == max {
                        x
                    } else {
                        y
                    }
                })?;
                self.done(DTensor::new(c, data), span)
            }
            TensorOp::IntMin | TensorOp::IntMax => {
                // Python's `min`/`max` of ints; a one-element int tensor counts by its value
                // (`__index__`), as where Helion reads it: a loop's bound.
                let a = self.int_of(next(), what, span)?;
                let b = self.int_of(next(), what, span)?;
                Ok(Value::Int(if matches!(op, TensorOp::IntMin) {
                    a.min(b)
                } else {
                    a.max(b)
                }))
            }
            TensorOp::Mod | TensorOp::And | TensorOp::Or => {
                let (a, b) = (next(), next());
                if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
                    let (x, y) = (*x, *y);
                    return Ok(Value::Int(match op {
                        TensorOp::Mod if y == 0 => {
                            return err(K::DivisionByZero, span, "integer modulo by zero");
                        }
                        TensorOp::Mod => py_mod_int(x, y),
                        TensorOp::And => x & y,
                        _ => x | y,
                    }));
                }
                if let (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) = (&a, &b)
                {
                    let (x, _) = self.scalar_of(a, span)?;
                    let (y, _) = self.scalar_of(b, span)?;
                    if !matches!(op, TensorOp::Mod) {
                        return err(K::TypeError, span, format!("`{what}` of Python floats"));
                    }
                    if y == 0.0 {
                        return err(K::DivisionByZero, span, "float modulo");
                    }
                    return Ok(Value::Float(float_mod(x, y)));
                }
                let a = self.arg(a, what, span)?;
                let b = self.arg(b, what, span)?;
                let c = result_type(&[a.opnd().operand(), b.opnd().operand()]);
                let data = match op {
                    TensorOp::Mod => {
                        if c == Ty::Bool {
                            return err(K::TypeError, span, "`%` of two masks");
                        }
                        if !c.is_float() {
                            let bv = operand_values(&b.opnd(), c, span)?;
                            if bv.iter().any(|&y| y == 0.0) {
                                return err(K::DivisionByZero, span, "integer modulo by zero");
                            }
                            let r = round_to(c);
                            zip_n(&[&a, &b], c, span, |v| {
                                r(py_mod_int(v[0] as i64, v[1] as i64) as f64)
                            })?
                        } else {
                            // torch computes in the float32 opmath type for both float types.
                            let r = round_to(c);
                            zip_n(&[&a, &b], c, span, |v| r(r32(float_mod(v[0], v[1]))))?
                        }
                    }
                    _ => {
                        if c.is_float() {
                            return err(K::TypeError, span, format!("`{what}` of float values"));
                        }
                        let and = matches!(op, TensorOp::And);
                        let r = round_to(c);
                        zip_n(&[&a, &b], c, span, |v| {
                            let (x, y) = (v[0] as i64, v[1] as i64);
                            r((if and { x & y } else { x | y }) as f64)
                        })?
                    }
                };
                self.done(DTensor::new(c, data), span)
            }
            TensorOp::Cmp(cmp) => {
                let (a, b) = (next(), next());
                if matches!(
                    (&a, &b),
                    (
                        Value::Int(_) | Value::Float(_),
                        Value::Int(_) | Value::Float(_)
                    )
                ) {
                    return Ok(Value::Int(i64::from(self.compare(*cmp, a, b, span)?)));
                }
                let a = self.arg(a, what, span)?;
                let b = self.arg(b, what, span)?;
                let mut c = result_type(&[a.opnd().operand(), b.opnd().operand()]);
                if c == Ty::Bool {
                    c = Ty::I64;
                }
                let cmp = *cmp;
                let data = zip_n(&[&a, &b], c, span, |v| {
                    let (x, y) = (v[0], v[1]);
                    f64::from(u8::from(match cmp {
                        CmpOp::Ge => x >= y,
                        CmpOp::Gt => x > y,
                        CmpOp::Le => x <= y,
                        CmpOp::Lt => x < y,
                        CmpOp::Eq => x == y,
                        CmpOp::Ne => x != y,
                    }))
                })?;
                self.done(DTensor::new(Ty::Bool, data), span)
            }
            TensorOp::Where => {
                let cond = self.tensor_arg(next(), what, span)?;
                if cond.ty != Ty::Bool {
                    return err(
                        K::TypeError,
                        span,
                        format!(
                            "torch.where's condition must be a mask, not {}",
                            cond.ty.name()
                        ),
                    );
                }
                let a = self.arg(next(), what, span)?;
                let b = self.arg(next(), what, span)?;
                let c = result_type(&[a.opnd().operand(), b.opnd().operand()]);
                let cond = Arg::T(cond);
                // The condition is read in its own type (0/1), the values in `c`.
                let mut shape = broadcast_shapes(cond.opnd().shape(), a.opnd().shape(), span)?;
                shape = broadcast_shapes(&shape, b.opnd().shape(), span)?;
                let m = operand_values(&cond.opnd(), Ty::Bool, span)?;
                let m = m.broadcast(IxDyn(&shape)).expect("checked").to_owned();
                let av = operand_values(&a.opnd(), c, span)?;
                let bv = operand_values(&b.opnd(), c, span)?;
                let (av, bv) = (
                    av.broadcast(IxDyn(&shape)).expect("checked").to_owned(),
                    bv.broadcast(IxDyn(&shape)).expect("checked").to_owned(),
                );
                let mut out = ArrayD::<f64>::zeros(IxDyn(&shape));
                Zip::from(&mut out)
                    .and(&m)
                    .and(&av)
                    .and(&bv)
                    .for_each(|o, &m, &x, &y| *o = if m != 0.0 { x } else { y });
                self.done(DTensor::new(c, out), span)
            }
            TensorOp::Reduce {
                kind,
                dims,
                keepdim,
            } => {
                let t = self.tensor_arg(next(), what, span)?;
                self.reduce(&t, *kind, dims.as_deref(), *keepdim, span)
            }
            TensorOp::Pad(pads) => {
                let t = self.tensor_arg(next(), what, span)?;
                // torch's constant_pad_nd fills with the value cast to the tensor's dtype.
                let fill = match next() {
                    Value::Int(i) => dense::cast_value(i as f64, Ty::I64, t.ty, span)?,
                    Value::Float(f) => dense::cast_value(f, Ty::F32, t.ty, span)?,
                    _ => {
                        return err(
                            K::TypeError,
                            span,
                            format!("{what}: the fill value is a Python number"),
                        );
                    }
                };
                let rank = t.shape().len();
                if pads.len() % 2 != 0 || pads.len() / 2 > rank || pads.iter().any(|&p| p < 0) {
                    return err(
                        K::TypeError,
                        span,
                        format!("{what}: pads {pads:?} for a tensor of rank {rank}"),
                    );
                }
                // `(before, after)` pairs from the last dim backwards.
                let mut before = vec![0usize; rank];
                let mut shape = t.shape().to_vec();
                for (i, pair) in pads.chunks(2).enumerate() {
                    let d = rank - 1 - i;
                    before[d] = pair[0] as usize;
                    shape[d] = shape[d]
                        .saturating_add(pair[0] as usize)
                        .saturating_add(pair[1] as usize);
                }
                // Charged before it is allocated: the pads are literals of any size.
                let numel = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
                self.charge(numel.unwrap_or(usize::MAX), span)?;
                let mut out = ArrayD::from_elem(IxDyn(&shape), fill);
                out.slice_each_axis_mut(|ax| {
                    let b = before[ax.axis.index()];
                    ndarray::Slice::from(b..b + t.shape()[ax.axis.index()])
                })
                .assign(&t.data);
                Ok(Value::Tensor(Rc::new(DTensor::new(t.ty, out))))
            }
            TensorOp::Transpose(d0, d1) => {
                let t = self.tensor_arg(next(), what, span)?;
                let rank = t.shape().len();
                if rank == 0 {
                    norm_dim(*d0, 1, 0, ".transpose", span)?;
                    norm_dim(*d1, 1, 0, ".transpose", span)?;
                    return Ok(Value::Tensor(t));
                }
                let (i, j) = (
                    norm_dim(*d0, rank, 0, ".transpose", span)?,
                    norm_dim(*d1, rank, 0, ".transpose", span)?,
                );
                let mut perm: Vec<i64> = (0..rank as i64).collect();
                perm.swap(i, j);
                self.charge(t.numel(), span)?;
                Ok(Value::Tensor(Rc::new(dense::permute(&t, &perm, span)?)))
            }
            TensorOp::Matmul | TensorOp::Bmm | TensorOp::Dot => {
                let a = self.tensor_arg(next(), what, span)?;
                let b = self.tensor_arg(next(), what, span)?;
                let acc = match op {
                    TensorOp::Dot => args
                        .next()
                        .map(|v| self.tensor_arg(v, what, span))
                        .transpose()?,
                    _ => None,
                };
                let out_ty = match (op, &acc) {
                    (TensorOp::Dot, Some(acc)) => acc.ty,
                    (TensorOp::Dot, None) => Ty::F32,
                    _ => {
                        if a.ty != b.ty {
                            return err(
                                K::TypeError,
                                span,
                                format!("{what}: operands of {} and {}", a.ty.name(), b.ty.name()),
                            );
                        }
                        a.ty
                    }
                };
                let p = self.product(&a, &b, what, matches!(op, TensorOp::Bmm), span)?;
                let r = round_to(out_ty);
                let p = p.mapv(r);
                match acc {
                    None => self.done(DTensor::new(out_ty, p), span),
                    Some(acc) => {
                        let (acc, p) = (Arg::T(acc), Arg::T(Rc::new(DTensor::new(out_ty, p))));
                        let data = zip_n(&[&acc, &p], out_ty, span, |v| r(v[0] + v[1]))?;
                        self.done(DTensor::new(out_ty, data), span)
                    }
                }
            }
            TensorOp::Addmm | TensorOp::Baddbmm => {
                let bias = self.tensor_arg(next(), what, span)?;
                let a = self.tensor_arg(next(), what, span)?;
                let b = self.tensor_arg(next(), what, span)?;
                // A bias of another dtype than the factors is Helion's accumulator form
                // (`acc = torch.addmm(acc, a_bf16, b_bf16)` with a float32 `acc`, read as
                // `hl.dot(a, b, acc=acc)`; eager torch refuses it): the result has the bias's
                // dtype, as `hl.dot` with `acc` (`lang::ir::types::ops`).
                if a.ty != b.ty {
                    return err(
                        K::TypeError,
                        span,
                        format!("{what}: operands of different dtypes"),
                    );
                }
                let want = if matches!(op, TensorOp::Addmm) { 2 } else { 3 };
                if a.shape().len() != want || b.shape().len() != want {
                    return err(
                        K::ShapeMismatch,
                        span,
                        format!("{what} takes {want}-D matrices"),
                    );
                }
                let ty = bias.ty;
                let p = self.product(&a, &b, what, want == 3, span)?;
                let pshape = p.shape().to_vec();
                if broadcast_shapes(bias.shape(), &pshape, span)? != pshape {
                    return err(
                        K::ShapeMismatch,
                        span,
                        format!("{what}: the bias does not broadcast to {pshape:?}"),
                    );
                }
                let r = round_to(ty);
                let bv = bias.data.broadcast(IxDyn(&pshape)).expect("checked");
                let mut out = p;
                Zip::from(&mut out)
                    .and(&bv)
                    .for_each(|o, &x| *o = r(*o + x));
                self.done(DTensor::new(ty, out), span)
            }
        }
    }
}

fn as3(t: &DTensor) -> Option<ndarray::ArrayView3<'_, f64>> {
    let s = t.shape();
    match s.len() {
        2 => t.data.view().into_shape_with_order((1, s[0], s[1])).ok(),
        3 => t.data.view().into_shape_with_order((s[0], s[1], s[2])).ok(),
        _ => None,
    }
}

impl Runtime<'_> {
    /// `a @ b` in f64 (2-D, or batched 3-D with a 2-D operand broadcast), before rounding;
    /// records the terms' magnitude in the watermark (module docs).
    fn product(
        &mut self,
        a: &DTensor,
        b: &DTensor,
        what: &str,
        batched_only: bool,
        span: Span,
    ) -> Res<ArrayD<f64>> {
        let (Some(x), Some(y)) = (as3(a), as3(b)) else {
            return err(
                K::ShapeMismatch,
                span,
                format!("{what} of shapes {:?} and {:?}", a.shape(), b.shape()),
            );
        };
        let three = a.shape().len() == 3 || b.shape().len() == 3;
        if batched_only && !(a.shape().len() == 3 && b.shape().len() == 3) {
            return err(K::ShapeMismatch, span, format!("{what} takes 3-D operands"));
        }
        let (bx, m, k) = x.dim();
        let (by, k2, n) = y.dim();
        let batch = bx.max(by);
        if k != k2 || (bx != by && bx != 1 && by != 1) {
            return err(
                K::ShapeMismatch,
                span,
                format!(
                    "{what}: shapes {:?} and {:?} cannot be multiplied",
                    a.shape(),
                    b.shape()
                ),
            );
        }
        let numel = batch * m * n;
        if numel > dense::MAX_NUMEL {
            return err(
                K::Budget,
                span,
                format!("a product of {numel} elements exceeds the budget"),
            );
        }
        self.charge(numel.saturating_mul(k.max(1)), span)?;
        let mut out = vec![0.0; numel];
        let mut mags = vec![0.0; numel];
        for bi in 0..batch {
            let xa = x.index_axis(Axis(0), if bx == 1 { 0 } else { bi });
            let yb = y.index_axis(Axis(0), if by == 1 { 0 } else { bi });
            for i in 0..m {
                for j in 0..n {
                    let (mut s, mut g) = (0.0, 0.0);
                    for l in 0..k {
                        let t = xa[[i, l]] * yb[[l, j]];
                        s += t;
                        g += t.abs();
                    }
                    out[(bi * m + i) * n + j] = s;
                    mags[(bi * m + i) * n + j] = g;
                }
            }
        }
        dense::observe(&mags);
        dense::observe_dot(&out, &mags, k);
        let shape: Vec<usize> = if three { vec![batch, m, n] } else { vec![m, n] };
        Ok(dense::from_shape_vec(&shape, out))
    }

    fn reduce(
        &mut self,
        t: &DTensor,
        kind: ReduceKind,
        dims: Option<&[i64]>,
        keepdim: bool,
        span: Span,
    ) -> Res<Value> {
        let what = kind.name();
        let rank = t.shape().len();
        let mut reduced = vec![false; rank];
        match dims {
            None => reduced.iter_mut().for_each(|r| *r = true),
            Some(ds) => {
                for &d in ds {
                    if rank == 0 {
                        norm_dim(d, 0, 0, what, span)?;
                        continue;
                    }
                    let i = norm_dim(d, rank, 0, what, span)?;
                    if reduced[i] {
                        return err(
                            K::InvalidArgument,
                            span,
                            format!("dim {d} appears multiple times in the list of dims"),
                        );
                    }
                    reduced[i] = true;
                }
            }
        }
        self.charge(t.numel(), span)?;
        if kind.is_index() {
            return self.arg_reduce(t, kind, dims.is_some().then_some(&reduced), keepdim, span);
        }
        let mut ty = t.ty;
        let mut data = t.data.clone();
        if rank == 0 && kind == ReduceKind::Sum && !ty.is_float() {
            ty = Ty::I64;
        }
        for d in (0..rank).rev().filter(|&d| reduced[d]) {
            match kind {
                ReduceKind::Sum => {
                    let (t2, d2) = crate::sum::sum_dim(ty, &data, d);
                    ty = t2;
                    data = d2;
                }
                ReduceKind::Argmax | ReduceKind::Argmin => {
                    unreachable!("index reductions return above")
                }
                ReduceKind::Amax | ReduceKind::Amin => {
                    if data.shape()[d] == 0 {
                        return err(
                            K::InvalidArgument,
                            span,
                            format!("{what}: an empty reduction has no identity"),
                        );
                    }
                    let max = kind == ReduceKind::Amax;
                    data = data.map_axis(Axis(d), |lane| {
                        lane.iter()
                            .copied()
                            .fold(None, |acc: Option<f64>, v| {
                                Some(match acc {
                                    None => v,
                                    Some(a) if a.is_nan() || v.is_nan() => f64::NAN,
                                    Some(a) => {
                                        if (v > a) == max && v != a {
                                            v
                                        } else {
                                            a
                                        }
                                    }
                                })
                            })
                            .expect("non-empty")
                    });
                }
            }
        }
        if !ty.is_float() && data.iter().any(|v| v.abs() > crate::ty::I64_EXACT) {
            return err(
                K::Overflow,
                span,
                "an int64 sum leaves the exact range ±2^53",
            );
        }
        if keepdim && rank > 0 {
            let shape: Vec<usize> = t
                .shape()
                .iter()
                .zip(&reduced)
                .map(|(&s, &r)| if r { 1 } else { s })
                .collect();
            data = data
                .into_shape_with_order(IxDyn(&shape))
                .expect("same element count");
        }
        self.done(DTensor::new(ty, dense::standard(data.view())), span)
    }

    /// `argmax`/`argmin` (torch's): the index of the first extreme value along the one
    /// reduced dim, or of the row-major flattened tensor when `reduced` is `None`; a NaN is
    /// the extreme (its first occurrence wins). int64, as torch returns.
    fn arg_reduce(
        &mut self,
        t: &DTensor,
        kind: ReduceKind,
        reduced: Option<&[bool]>,
        keepdim: bool,
        span: Span,
    ) -> Res<Value> {
        let what = kind.name();
        let max = kind == ReduceKind::Argmax;
        let first_extreme = |lane: &mut dyn Iterator<Item = f64>| {
            let mut best: Option<(usize, f64)> = None;
            for (i, v) in lane.enumerate() {
                best = match best {
                    None => Some((i, v)),
                    Some((_, b)) if b.is_nan() => best,
                    Some(_) if v.is_nan() => Some((i, v)),
                    Some((_, b)) if (if max { v > b } else { v < b }) => Some((i, v)),
                    keep => keep,
                };
            }
            best.map(|(i, _)| i as f64)
        };
        let empty = || {
            err(
                K::InvalidArgument,
                span,
                format!("{what}: an empty reduction has no index"),
            )
        };
        let rank = t.shape().len();
        let dim = reduced.and_then(|r| r.iter().position(|&x| x));
        let data = match dim {
            // Every dim of a 0-d tensor, or no dim given: the flattened tensor.
            None => {
                let Some(i) = first_extreme(&mut t.data.iter().copied()) else {
                    return empty();
                };
                let shape = if keepdim { vec![1; rank] } else { Vec::new() };
                dense::from_shape_vec(&shape, vec![i])
            }
            Some(d) => {
                if t.shape()[d] == 0 {
                    return empty();
                }
                let mut data = t.data.map_axis(Axis(d), |lane| {
                    first_extreme(&mut lane.iter().copied()).expect("non-empty")
                });
                if keepdim {
                    let mut shape = t.shape().to_vec();
                    shape[d] = 1;
                    data = data
                        .into_shape_with_order(IxDyn(&shape))
                        .expect("same element count");
                }
                dense::standard(data.view())
            }
        };
        self.done(DTensor::new(Ty::I64, data), span)
    }
}
