//! Statements and control flow: function calls, statement bodies (assignments, `for`,
//! `pl.when`, `return`), and the traced control flow of `lax.fori_loop`, `lax.cond` and
//! `pltpu.emit_pipeline`, with the carry and branch type rules tracing checks.

use super::{Machine, arr_of, describe, next_grid_index, py_int, te};
use crate::error::{ErrorKind, SimError, SimResult, SimStage};
use crate::resolve::{RExpr, RStmt, RTarget};
use crate::value::{Arr, Cat, Shape, Value};
use std::rc::Rc;

/// A value converted for a loop carry or `cond` operand: Python scalars become arrays, and
/// nothing stays a compile-time constant across the loop or branch boundary.
fn carry_of(v: Value) -> SimResult<Value> {
    match v {
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => Ok(Value::Arr(arr_of(&v)?.opaque())),
        Value::Arr(a) => Ok(Value::Arr(a.opaque())),
        Value::None | Value::Ref(_) => Ok(v),
        // A loop's carry comes back as it went in: no new tuple (two allocations per
        // iteration) when nothing in it changes.
        Value::Tuple(ref items) if items.iter().all(is_carry) => Ok(v),
        Value::Tuple(items) => Ok(Value::Tuple(
            items
                .iter()
                .cloned()
                .map(carry_of)
                .collect::<SimResult<Vec<_>>>()?
                .into(),
        )),
        Value::Unbound | Value::Ds { .. } | Value::Func(_) => Err(te(
            ErrorKind::TypeError,
            format!("{} is not a valid JAX type", v.type_name()),
        )),
    }
}

/// Whether [`carry_of`] keeps a value as it is.
fn is_carry(v: &Value) -> bool {
    match v {
        Value::Arr(a) => !a.konst && a.lazy.is_none(),
        Value::None | Value::Ref(_) => true,
        Value::Tuple(items) => items.iter().all(is_carry),
        Value::Int(_)
        | Value::Float(_)
        | Value::Bool(_)
        | Value::Unbound
        | Value::Ds { .. }
        | Value::Func(_) => false,
    }
}

/// The traced version of a value.
fn traced(v: &Value) -> Value {
    match v {
        Value::Arr(a) => Value::Arr(Arr::traced(a.cat, a.shape)),
        Value::Tuple(items) => Value::Tuple(items.iter().map(traced).collect::<Vec<_>>().into()),
        other => other.clone(),
    }
}

/// JAX's `TypeError` when two carries or branch outputs differ in type; `message` gets both
/// described, in argument order.
fn require_same_type(
    a: &Value,
    b: &Value,
    message: impl FnOnce(&str, &str) -> String,
) -> SimResult<()> {
    if same_type(a, b) {
        Ok(())
    } else {
        Err(te(
            ErrorKind::TypeError,
            message(&describe(a), &describe(b)),
        ))
    }
}

/// Whether two carries or branch outputs have the same type (weak types may differ).
fn same_type(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Arr(x), Value::Arr(y)) => x.shape == y.shape && x.cat.dtype() == y.cat.dtype(),
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same_type(p, q))
        }
        (Value::None, Value::None) => true,
        (Value::Ref(x), Value::Ref(y)) => x.shape() == y.shape() && x.cat == y.cat,
        _ => false,
    }
}

impl<'p> Machine<'p> {
    /// Calls function `f` with `args`.
    pub fn call(
        &mut self,
        f: usize,
        args: impl IntoIterator<Item = Value, IntoIter: ExactSizeIterator>,
    ) -> SimResult<Value> {
        // Any exact-size iterator: loop bodies are called with arrays, not fresh `Vec`s.
        let args = args.into_iter();
        let res = self.res;
        let func = &res.funcs[f];
        if args.len() != func.params.len() {
            return Err(te(
                ErrorKind::TypeError,
                format!(
                    "{}() takes {} positional arguments but {} were given",
                    func.name,
                    func.params.len(),
                    args.len()
                ),
            ));
        }
        for &s in &func.locals {
            self.slots[s as usize] = Value::Unbound;
        }
        for (&p, a) in func.params.iter().zip(args) {
            self.slots[p as usize] = a;
        }
        self.run_body(f)
    }

    /// Runs the body of function `f`, its parameters bound (the non-generic part of
    /// [`Machine::call`]).
    fn run_body(&mut self, f: usize) -> SimResult<Value> {
        let res = self.res;
        let func = &res.funcs[f];
        self.stack.push(f);
        let r = self.exec(&func.body);
        let r = match r {
            Ok(v) => v.unwrap_or(Value::None),
            Err(mut e) => {
                if e.context.is_empty() {
                    e.context = self
                        .stack
                        .iter()
                        .map(|&k| res.funcs[k].name.clone())
                        .collect();
                }
                self.stack.pop();
                return Err(e);
            }
        };
        self.stack.pop();
        Ok(r)
    }

    fn exec(&mut self, body: &'p [RStmt]) -> SimResult<Option<Value>> {
        for s in body {
            if self.steps_left == 0 {
                return Err(SimError::new(
                    SimStage::Run,
                    ErrorKind::StepLimit,
                    "the run exceeded its statement budget",
                ));
            }
            self.steps_left -= 1;
            match s {
                RStmt::Assign(t, e) => {
                    let v = self.eval(e)?;
                    self.assign(t, v)?;
                }
                RStmt::Store {
                    target,
                    index,
                    value,
                } => self.store(target, index, value)?,
                RStmt::For {
                    var,
                    start,
                    stop,
                    step,
                    body,
                } => {
                    let start = self.range_arg(start)?;
                    let stop = self.range_arg(stop)?;
                    let step = match step {
                        Some(s) => self.range_arg(s)?,
                        None => 1,
                    };
                    if step == 0 {
                        return Err(te(ErrorKind::ValueError, "range() arg 3 must not be zero"));
                    }
                    let mut i = start;
                    while (step > 0 && i < stop) || (step < 0 && i > stop) {
                        self.slots[*var as usize] = Value::Int(i);
                        if let Some(r) = self.exec(body)? {
                            return Ok(Some(r));
                        }
                        i += step;
                    }
                }
                RStmt::Def { slot, func } => self.slots[*slot as usize] = Value::Func(*func),
                RStmt::Return(e) => {
                    let v = match e {
                        Some(e) => self.eval(e)?,
                        None => Value::None,
                    };
                    return Ok(Some(v));
                }
                RStmt::Expr(e) => {
                    self.eval(e)?;
                }
                RStmt::When { pred, slot, func } => {
                    let p = self.eval(pred)?;
                    self.slots[*slot as usize] = Value::None;
                    let taken = match &p {
                        // `pl.when` of a Python bool decides at trace time.
                        Value::Bool(b) => Some(*b),
                        Value::Int(i) => Some(*i != 0),
                        Value::Arr(a) if a.shape.rank() == 0 && !a.cat.is_float() => {
                            if self.tracing {
                                None
                            } else {
                                a.item().map(|x| x != 0.0)
                            }
                        }
                        other @ (Value::Arr(_)
                        | Value::Unbound
                        | Value::None
                        | Value::Float(_)
                        | Value::Ref(_)
                        | Value::Ds { .. }
                        | Value::Tuple(_)
                        | Value::Func(_)) => {
                            return Err(te(
                                ErrorKind::TypeError,
                                format!(
                                    "pl.when needs a scalar bool or int condition, got {}",
                                    describe(other)
                                ),
                            ));
                        }
                    };
                    // Tracing visits the body once, as `pl.when` traces it into a `cond`.
                    if taken.unwrap_or(self.tracing) {
                        self.call(*func, [])?;
                    }
                }
                RStmt::AsyncCopy { src, dst, sem, op } => self.async_copy(src, dst, sem, *op)?,
            }
        }
        Ok(None)
    }

    fn range_arg(&mut self, e: &'p RExpr) -> SimResult<i64> {
        let v = self.eval(e)?;
        py_int(&v).ok_or_else(|| {
            te(
                ErrorKind::TypeError,
                format!(
                    "range() needs a Python int, got {} (a traced value cannot be used in a Python loop)",
                    describe(&v)
                ),
            )
        })
    }

    fn assign(&mut self, t: &RTarget, v: Value) -> SimResult<()> {
        match t {
            RTarget::Name(s) => self.slots[*s as usize] = v,
            RTarget::Tuple(names) => {
                let Value::Tuple(items) = &v else {
                    return Err(te(
                        ErrorKind::TypeError,
                        format!("cannot unpack non-iterable {} object", v.type_name()),
                    ));
                };
                if items.len() != names.len() {
                    return Err(te(
                        ErrorKind::ValueError,
                        format!(
                            "expected {} values to unpack, got {}",
                            names.len(),
                            items.len()
                        ),
                    ));
                }
                for (s, x) in names.iter().zip(items.iter()) {
                    self.slots[*s as usize] = x.clone();
                }
            }
        }
        Ok(())
    }

    fn func_of(&mut self, e: &'p RExpr) -> SimResult<usize> {
        match self.eval(e)? {
            Value::Func(f) => Ok(f),
            other => Err(te(
                ErrorKind::TypeError,
                format!("'{}' object is not callable", other.type_name()),
            )),
        }
    }

    /// `jax.lax.fori_loop` (out of line: keeps `eval`'s stack frame, paid on every
    /// expression, small).
    #[inline(never)]
    pub(super) fn fori_loop(
        &mut self,
        lower: &'p RExpr,
        upper: &'p RExpr,
        body: &'p RExpr,
        init: &'p RExpr,
    ) -> SimResult<Value> {
        let lo = self.int_operand(lower, "fori_loop lower")?;
        let hi = self.int_operand(upper, "fori_loop upper")?;
        let f = self.func_of(body)?;
        let init = self.eval(init)?;
        let carry = carry_of(init)?;
        if self.tracing {
            let j = Value::Arr(Arr::traced(Cat::I32, Shape::SCALAR));
            let out = carry_of(self.call(f, [j, traced(&carry)])?)?;
            require_same_type(&out, &carry, |o, c| {
                format!("fori_loop body output carry {o} does not match the input carry {c}")
            })?;
            Ok(traced(&out))
        } else {
            let (lo, hi) = (lo.value().unwrap_or(0), hi.value().unwrap_or(0));
            let mut c = carry;
            for i in lo..hi {
                let j = Value::Arr(Arr::scalar(Cat::I32, i as f64));
                c = carry_of(self.call(f, [j, c])?)?;
            }
            Ok(c)
        }
    }

    /// `jax.lax.cond` (out of line, like [`Machine::fori_loop`]).
    #[inline(never)]
    pub(super) fn cond(
        &mut self,
        pred: &'p RExpr,
        then_fn: &'p RExpr,
        else_fn: &'p RExpr,
        operands: &'p [RExpr],
    ) -> SimResult<Value> {
        let p = self.eval(pred)?;
        let taken = match &p {
            Value::Bool(b) => Some(*b),
            Value::Int(i) => Some(*i > 0),
            Value::Arr(a) if a.shape.rank() == 0 && !a.cat.is_float() => a.item().map(|x| x > 0.0),
            other => {
                return Err(te(
                    ErrorKind::TypeError,
                    format!(
                        "Pred must be a scalar boolean or integer, got {}",
                        describe(other)
                    ),
                ));
            }
        };
        let t = self.func_of(then_fn)?;
        let f = self.func_of(else_fn)?;
        let ops = operands
            .iter()
            .map(|o| self.eval(o).and_then(carry_of))
            .collect::<SimResult<Vec<_>>>()?;
        if self.tracing {
            let targs: Vec<Value> = ops.iter().map(traced).collect();
            let a = carry_of(self.call(t, targs.clone())?)?;
            let b = carry_of(self.call(f, targs)?)?;
            require_same_type(&a, &b, |a, b| {
                format!("true_fun and false_fun output must have identical types, got {a} and {b}")
            })?;
            Ok(traced(&a))
        } else {
            let branch = if taken.unwrap_or(false) { t } else { f };
            carry_of(self.call(branch, ops)?)
        }
    }

    /// `pltpu.emit_pipeline(body, grid=...)()` (out of line, like [`Machine::fori_loop`]).
    #[inline(never)]
    pub(super) fn emit_pipeline(&mut self, body: &'p RExpr, grid: &'p [RExpr]) -> SimResult<()> {
        let f = self.func_of(body)?;
        let dims = grid
            .iter()
            .map(|g| self.int_operand(g, "emit_pipeline grid"))
            .collect::<SimResult<Vec<_>>>()?;
        if self.tracing {
            let idx: Vec<Value> = dims
                .iter()
                .map(|_| Value::Arr(Arr::traced(Cat::I32, Shape::SCALAR)))
                .collect();
            self.call(f, [Value::Tuple(idx.into())])?;
        } else {
            let dims: Vec<i64> = dims.iter().map(|d| d.value().unwrap_or(0)).collect();
            if dims.iter().all(|&d| d > 0) {
                let mut idx = vec![0i64; dims.len()];
                loop {
                    // Straight into the tuple (one allocation, no `Vec` in between).
                    let t: Rc<[Value]> = idx
                        .iter()
                        .map(|&i| Value::Arr(Arr::scalar(Cat::I32, i as f64)))
                        .collect();
                    self.call(f, [Value::Tuple(t)])?;
                    if !next_grid_index(&mut idx, &dims) {
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}
