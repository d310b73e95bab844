//! Statements: blocks in program order, `hl.tile`/`hl.grid` loops (with the iteration budget),
//! `if` conditions, assignments, in-place updates (`+=` and the aliasing refusals), stores and
//! atomics as statements, and `return` with the returned tensors.

use super::{Flow, MAX_ITERATIONS, Runtime, TileV, Value, cdiv_span};
use crate::dense::{self, DTensor};
use crate::error::{EvalErrorKind as K, Res, err};
use crate::output::Output;
use crate::plan::{CExpr, CK, CLoop, CStmt, SK};
use crate::ty::Ty;
use lang::ir::{BinOp, LoopKind, Span};
use lang::tensor::Tensor;
use std::rc::Rc;

/// Whether torch can cast a result of type `from` into an existing tensor of type `to`
/// (`can_cast`: no float into an integer tensor).
fn can_cast(from: Ty, to: Ty) -> bool {
    !from.is_float() || to.is_float()
}

impl Runtime<'_> {
    pub(super) fn block(&mut self, body: &[CStmt]) -> Res<Flow> {
        for s in body {
            if let Flow::Return(o) = self.stmt(s)? {
                return Ok(Flow::Return(o));
            }
        }
        Ok(Flow::Normal)
    }

    fn stmt(&mut self, s: &CStmt) -> Res<Flow> {
        match &s.kind {
            SK::Assign(slot, value) => {
                let v = self.eval(value)?;
                self.slots[*slot] = Some(v);
            }
            SK::AugAssign(slot, op, value) => self.aug_assign(*slot, *op, value, s.span)?,
            SK::Store {
                tensor,
                indices,
                value,
            } => {
                let h = self.host_target(tensor)?;
                let ixs = self.indices(indices)?;
                let v = self.eval(value)?;
                self.store(&h, &ixs, v, s.span)?;
            }
            SK::Atomic {
                op,
                tensor,
                indices,
                expected,
                value,
            } => {
                let h = self.host_target(tensor)?;
                let ixs = self.indices(indices)?;
                let x = expected.as_ref().map(|e| self.eval(e)).transpose()?;
                let v = self.eval(value)?;
                self.atomic(*op, &h, &ixs, x, v, s.span)?;
            }
            SK::For(lp) => return self.run_loop(lp, s.span),
            SK::If(cond, then_body, else_body) => {
                let body = if self.truth(cond)? {
                    then_body
                } else {
                    else_body
                };
                return self.block(body);
            }
            SK::Return(values) => {
                if values.is_empty() {
                    // `return` alone: the outputs are what the kernel wrote (`Plan::run`).
                    return Ok(Flow::Return(Vec::new()));
                }
                let mut outputs = Vec::new();
                for (e, name) in values {
                    let v = self.eval(e)?;
                    outputs.push(Output {
                        name: name.clone(),
                        tensor: self.output_tensor(v, name, e.span)?,
                    });
                }
                return Ok(Flow::Return(outputs));
            }
        }
        Ok(Flow::Normal)
    }

    pub(super) fn output_tensor(&self, v: Value, name: &str, span: Span) -> Res<Tensor> {
        let t = match v {
            Value::Host(h) => {
                let s = &self.storages[h.storage];
                if s.unwritten > 0 {
                    return err(
                        K::UninitializedOutput,
                        span,
                        format!(
                            "returned tensor `{name}` has {} of {} elements never written (torch.empty)",
                            s.unwritten,
                            s.data.len()
                        ),
                    );
                }
                let values = s.data.to_vec();
                (s.ty, h.shape.to_vec(), values)
            }
            Value::Tensor(t) => {
                let t = Rc::try_unwrap(t).unwrap_or_else(|t| (*t).clone());
                let shape = t.shape().to_vec();
                let (values, offset) = t.data.into_raw_vec_and_offset();
                debug_assert_eq!(
                    offset.unwrap_or(0),
                    0,
                    "a device value is in standard layout"
                );
                (t.ty, shape, values)
            }
            other => {
                return err(
                    K::NoReturn,
                    span,
                    format!(
                        "the kernel returns {} (`{name}`), not a tensor",
                        other.kind_name()
                    ),
                );
            }
        };
        let (ty, shape, values) = t;
        let Some(dtype) = ty.dtype() else {
            return err(
                K::NoReturn,
                span,
                format!(
                    "the kernel returns an {} tensor (`{name}`), which no case dtype holds",
                    ty.name()
                ),
            );
        };
        Ok(Tensor {
            dtype,
            shape,
            values,
        })
    }

    fn run_loop(&mut self, lp: &CLoop, span: Span) -> Res<Flow> {
        let mut ranges = Vec::with_capacity(lp.dims.len());
        for d in &lp.dims {
            let b = match &d.begin {
                Some(e) => self.eval_index_int(e, "a loop bound")?,
                None => 0,
            };
            let e = self.eval_index_int(&d.end, "a loop bound")?;
            let block = match d.block {
                crate::plan::LoopBlock::Fixed(bs) => bs,
                crate::plan::LoopBlock::WholeExtent => e.saturating_sub(b).max(1),
            };
            ranges.push((b, e, block));
        }
        let counts: Vec<i64> = ranges
            .iter()
            .map(|&(b, e, bs)| if e > b { cdiv_span(b, e, bs) } else { 0 })
            .collect();
        let total = counts
            .iter()
            .try_fold(1u64, |acc, &c| acc.checked_mul(c as u64));
        match total {
            Some(0) => return Ok(Flow::Normal),
            Some(t) if self.iterations.saturating_add(t) <= MAX_ITERATIONS => self.iterations += t,
            _ => {
                return err(
                    K::Budget,
                    span,
                    format!(
                        "the loop would run {counts:?} iterations; the budget is {MAX_ITERATIONS} in all"
                    ),
                );
            }
        }
        let k = ranges.len();
        let mut idx = vec![0i64; k];
        loop {
            for (d, &(b, e, bs)) in ranges.iter().enumerate() {
                let v = match lp.kind {
                    LoopKind::Grid => Value::Int(b + idx[d]),
                    LoopKind::Tile => {
                        let begin = (i128::from(b) + i128::from(idx[d]) * i128::from(bs)) as i64;
                        Value::Tile(TileV {
                            begin,
                            end: begin.saturating_add(bs).min(e),
                            block: bs,
                            loop_begin: b,
                            loop_end: e,
                        })
                    }
                };
                self.slots[lp.vars[d]] = Some(v);
            }
            if let Flow::Return(o) = self.block(&lp.body)? {
                return Ok(Flow::Return(o));
            }
            let mut d = k;
            loop {
                if d == 0 {
                    return Ok(Flow::Normal);
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < counts[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    fn truth(&mut self, cond: &CExpr) -> Res<bool> {
        if let CK::Compare(op, l, r) = &cond.kind {
            let a = self.eval(l)?;
            let b = self.eval(r)?;
            return self.compare(*op, a, b, cond.span);
        }
        let v = self.eval(cond)?;
        Ok(self.scalar_of(v, cond.span)?.0 != 0.0)
    }

    fn aug_assign(&mut self, slot: usize, op: BinOp, value: &CExpr, span: Span) -> Res<()> {
        let cur = self.get(slot, span)?;
        let v = self.eval(value)?;
        match cur {
            Value::Tensor(t) => {
                let other = self.slots.iter().enumerate().find(|(k, s)| {
                    *k != slot && matches!(s, Some(Value::Tensor(o)) if o.alias == t.alias)
                });
                if let Some((k, _)) = other {
                    return err(
                        K::AliasedInPlace,
                        span,
                        format!(
                            "`{} {}= ...` updates a tensor in place that `{}` also refers to",
                            self.plan.names[slot],
                            op.symbol(),
                            self.plan.names[k]
                        ),
                    );
                }
                let r = match self.binary(op, Value::Tensor(Rc::clone(&t)), v, span)? {
                    Value::Tensor(r) => r,
                    _ => unreachable!("tensor arithmetic gives a tensor"),
                };
                let mut r = self.in_place_result(t.shape(), t.ty, r, span)?;
                r.alias = t.alias;
                self.slots[slot] = Some(Value::Tensor(Rc::new(r)));
            }
            Value::Host(h) => {
                let whole = self.host_read_all(&h, span)?;
                let ty = whole.ty;
                let shape = whole.shape().to_vec();
                let r = match self.binary(op, Value::Tensor(Rc::new(whole)), v, span)? {
                    Value::Tensor(r) => r,
                    _ => unreachable!("tensor arithmetic gives a tensor"),
                };
                let r = self.in_place_result(&shape, ty, r, span)?;
                self.store(&h, &[], Value::Tensor(Rc::new(r)), span)?;
            }
            other => {
                let r = self.binary(op, other, v, span)?;
                self.slots[slot] = Some(r);
            }
        }
        Ok(())
    }

    /// The result of an in-place op: same shape and type as the target (torch's rules).
    fn in_place_result(&self, shape: &[usize], ty: Ty, r: Rc<DTensor>, span: Span) -> Res<DTensor> {
        if r.shape() != shape {
            return err(
                K::ShapeMismatch,
                span,
                format!(
                    "output with shape {shape:?} doesn't match the broadcast shape {:?}",
                    r.shape()
                ),
            );
        }
        if !can_cast(r.ty, ty) {
            return err(
                K::TypeError,
                span,
                format!(
                    "result type {} can't be cast to the desired output type {}",
                    r.ty.name(),
                    ty.name()
                ),
            );
        }
        let r = Rc::try_unwrap(r).unwrap_or_else(|r| (*r).clone());
        dense::cast(r, ty, span)
    }
}
