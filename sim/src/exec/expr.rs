//! Expressions: names, literals, tuples, Python-scalar and JAX arithmetic and comparisons,
//! `pl.ds`, `pl.program_id`, `pl.multiple_of`, `astype`, and indexing of values and tuples (a
//! Ref index goes to `refs`).

use super::{Machine, as_arr, describe, into_arr, py_int, te, weak_int};
use crate::error::{ErrorKind, SimError, SimResult};
use crate::ops::{self, VIdx};
use crate::resolve::{RExpr, RIndex};
use crate::value::{Arr, Cat, IntVal, MAX_RANK, Shape, Value};
use lang::pallas::{BinOp, CmpOp};
use std::rc::Rc;

/// Python's `a // b` ([`lang::ir::arith::floor_div`]), with Python's error for a zero divisor.
fn py_floor_div(a: i64, b: i64) -> SimResult<i64> {
    if b == 0 {
        return Err(te(
            ErrorKind::ZeroDivisionError,
            "integer division or modulo by zero",
        ));
    }
    lang::ir::arith::floor_div(a, b)
        .ok_or_else(|| SimError::unsupported("Python int arithmetic beyond 64 bits"))
}

fn py_float_mod(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
        r + b
    } else {
        r
    }
}

/// Python arithmetic on Python scalars.
fn py_binary(op: BinOp, a: &Value, b: &Value) -> SimResult<Value> {
    let overflow = || SimError::unsupported("Python int arithmetic beyond 64 bits");
    if let (Some(x), Some(y)) = (py_int(a), py_int(b)) {
        return Ok(match op {
            BinOp::Add => Value::Int(x.checked_add(y).ok_or_else(overflow)?),
            BinOp::Sub => Value::Int(x.checked_sub(y).ok_or_else(overflow)?),
            BinOp::Mul => Value::Int(x.checked_mul(y).ok_or_else(overflow)?),
            BinOp::Div => {
                if y == 0 {
                    return Err(te(ErrorKind::ZeroDivisionError, "division by zero"));
                }
                Value::Float(x as f64 / y as f64)
            }
            BinOp::FloorDiv => Value::Int(py_floor_div(x, y)?),
            BinOp::Mod => {
                py_floor_div(x, y)?;
                Value::Int(lang::ir::arith::floor_mod(x, y).ok_or_else(overflow)?)
            }
            BinOp::BitAnd => Value::Int(x & y),
            BinOp::BitOr => Value::Int(x | y),
            BinOp::BitXor => Value::Int(x ^ y),
        });
    }
    let f = |v: &Value| match v {
        Value::Float(f) => *f,
        other => py_int(other).unwrap_or(0) as f64,
    };
    let (x, y) = (f(a), f(b));
    let zero = || te(ErrorKind::ZeroDivisionError, "float division by zero");
    Ok(Value::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return Err(zero());
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return Err(zero());
            }
            ((x - py_float_mod(x, y)) / y).round()
        }
        BinOp::Mod => {
            if y == 0.0 {
                return Err(zero());
            }
            py_float_mod(x, y)
        }
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
            return Err(te(
                ErrorKind::TypeError,
                "unsupported operand type(s) for a bitwise operation: 'float'",
            ));
        }
    }))
}

fn is_py_scalar(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_))
}

impl<'p> Machine<'p> {
    /// An int operand of JAX (a Python int, or a 0-d int array).
    pub(super) fn int_operand(&mut self, e: &'p RExpr, what: &str) -> SimResult<IntVal> {
        let v = self.eval(e)?;
        self.int_of(&v, what)
    }

    pub(super) fn int_of(&self, v: &Value, what: &str) -> SimResult<IntVal> {
        match v {
            Value::Int(i) => Ok(IntVal::Static(*i)),
            Value::Bool(b) => Ok(IntVal::Static(i64::from(*b))),
            Value::Arr(a) if a.shape.rank() == 0 && (a.cat.is_int() || a.cat == Cat::Bool) => {
                Ok(IntVal::Traced(a.item().map(|x| x as i64)))
            }
            other => Err(te(
                ErrorKind::TypeError,
                format!("{what} must be an int scalar, got {}", describe(other)),
            )),
        }
    }

    /// Evaluates an expression. A bound name and an int literal (about half of all
    /// evaluations) are read right where they are needed: a call of the general evaluator
    /// costs more than they do (its prologue and the write of its 104-byte result were 50
    /// instructions per evaluation, callgrind, 2,000 cases).
    #[inline(always)]
    pub(super) fn eval(&mut self, e: &'p RExpr) -> SimResult<Value> {
        match e {
            RExpr::Load { slot, .. } if !matches!(self.slots[*slot as usize], Value::Unbound) => {
                Ok(self.slots[*slot as usize].clone())
            }
            RExpr::Int(v) => Ok(Value::Int(*v)),
            _ => self.eval_node(e),
        }
    }

    /// [`Machine::eval`] of any expression.
    #[inline(never)]
    fn eval_node(&mut self, e: &'p RExpr) -> SimResult<Value> {
        Ok(match e {
            RExpr::Load { slot, local } => match &self.slots[*slot as usize] {
                Value::Unbound => {
                    let name = self.res.slot_name(*slot);
                    return Err(if *local {
                        te(
                            ErrorKind::UnboundLocalError,
                            format!("local variable '{name}' referenced before assignment"),
                        )
                    } else {
                        te(
                            ErrorKind::NameError,
                            format!(
                                "free variable '{name}' referenced before assignment in enclosing scope"
                            ),
                        )
                    });
                }
                v => v.clone(),
            },
            RExpr::Unresolved(n) => {
                return Err(te(
                    ErrorKind::NameError,
                    format!("name '{n}' is not defined"),
                ));
            }
            RExpr::Int(v) => Value::Int(*v),
            RExpr::Float(v) => Value::Float(*v),
            RExpr::Bool(b) => Value::Bool(*b),
            RExpr::None => Value::None,
            // A one-element tuple (a loop's `(acc,)`) in one allocation; longer ones through
            // a `Vec`.
            RExpr::Tuple(items) => Value::Tuple(match &items[..] {
                [x] => Rc::from([self.eval(x)?]),
                _ => items
                    .iter()
                    .map(|x| self.eval(x))
                    .collect::<SimResult<Vec<_>>>()?
                    .into(),
            }),
            RExpr::Binary(op, a, b) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                if is_py_scalar(&a) && is_py_scalar(&b) {
                    py_binary(*op, &a, &b)?
                } else {
                    Value::Arr(ops::binary(*op, &*as_arr(&a)?, &*as_arr(&b)?)?)
                }
            }
            RExpr::Compare(op, a, b) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                if is_py_scalar(&a) && is_py_scalar(&b) {
                    let f = |v: &Value| match v {
                        Value::Float(f) => *f,
                        other => py_int(other).unwrap_or(0) as f64,
                    };
                    let (x, y) = (f(&a), f(&b));
                    Value::Bool(match op {
                        CmpOp::Lt => x < y,
                        CmpOp::Le => x <= y,
                        CmpOp::Gt => x > y,
                        CmpOp::Ge => x >= y,
                        CmpOp::Eq => x == y,
                        CmpOp::Ne => x != y,
                    })
                } else {
                    Value::Arr(ops::compare(*op, &*as_arr(&a)?, &*as_arr(&b)?)?)
                }
            }
            RExpr::Neg(v) => match self.eval(v)? {
                Value::Int(i) => Value::Int(
                    i.checked_neg()
                        .ok_or_else(|| SimError::unsupported("Python int beyond 64 bits"))?,
                ),
                Value::Bool(b) => Value::Int(-i64::from(b)),
                Value::Float(f) => Value::Float(-f),
                other => Value::Arr(ops::neg(&into_arr(other)?)?),
            },
            RExpr::Index(base, index) => {
                let b = self.eval(base)?;
                self.index(b, index)?
            }
            RExpr::At(base, index) => match self.eval(base)? {
                Value::Ref(v) => Value::Ref(Rc::new(self.ref_index(&v, index)?)),
                other => {
                    return Err(SimError::unsupported(format!(
                        "`.at[...]` on a {} (only Refs are modelled)",
                        describe(&other)
                    )));
                }
            },
            RExpr::RefReshape(base, shape) => match self.eval(base)? {
                Value::Ref(v) => Value::Ref(Rc::new(self.ref_reshape(&v, shape)?)),
                Value::Arr(a) => Value::Arr(ops::reshape(&a, shape)?),
                other => {
                    return Err(te(
                        ErrorKind::AttributeError,
                        format!("'{}' object has no attribute 'reshape'", other.type_name()),
                    ));
                }
            },
            RExpr::Astype(v, d) => match self.eval(v)? {
                Value::Arr(a) => Value::Arr(ops::astype(&a, *d)),
                other => {
                    return Err(te(
                        ErrorKind::AttributeError,
                        format!("'{}' object has no attribute 'astype'", other.type_name()),
                    ));
                }
            },
            RExpr::Ds(start, size) => {
                let start = self.int_operand(start, "pl.ds start")?;
                let size = match self.int_operand(size, "pl.ds size")? {
                    IntVal::Static(s) => s,
                    IntVal::Traced(_) => {
                        return Err(SimError::unsupported("pl.ds with a traced size"));
                    }
                };
                Value::Ds { start, size }
            }
            RExpr::MultipleOf(v, m) => {
                let _ = self.int_operand(m, "pl.multiple_of multiple")?;
                match self.eval(v)? {
                    Value::Int(i) => Value::Arr(weak_int(i)?),
                    Value::Arr(a) => Value::Arr(a),
                    other => {
                        return Err(te(
                            ErrorKind::TypeError,
                            format!("pl.multiple_of of a {}", describe(&other)),
                        ));
                    }
                }
            }
            RExpr::ProgramId(axis) => {
                if *axis >= self.grid_rank {
                    return Err(te(
                        ErrorKind::ValueError,
                        format!(
                            "pl.program_id({axis}) of a grid with {} axes",
                            self.grid_rank
                        ),
                    ));
                }
                if self.tracing {
                    Value::Arr(Arr::traced(Cat::I32, Shape::SCALAR))
                } else {
                    Value::Arr(Arr::scalar(Cat::I32, self.pid[*axis] as f64))
                }
            }
            RExpr::Jnp(j) => Value::Arr(self.jnp(j)?),
            RExpr::ForiLoop {
                lower,
                upper,
                body,
                init,
            } => self.fori_loop(lower, upper, body, init)?,
            RExpr::Cond {
                pred,
                then_fn,
                else_fn,
                operands,
            } => self.cond(pred, then_fn, else_fn, operands)?,
            RExpr::EmitPipeline { body, grid } => {
                self.emit_pipeline(body, grid)?;
                Value::None
            }
        })
    }

    pub(super) fn arr(&mut self, e: &'p RExpr) -> SimResult<Arr> {
        let v = self.eval(e)?;
        into_arr(v)
    }

    fn index(&mut self, base: Value, index: &'p [RIndex]) -> SimResult<Value> {
        match base {
            Value::Ref(v) => {
                let view = self.ref_index(&v, index)?;
                Ok(Value::Arr(self.read(&view)?))
            }
            Value::Arr(a) => {
                // On the stack: an index has a few parts (a longer one is an error below).
                let mut small = [VIdx::Full; 2 * MAX_RANK];
                let mut large = Vec::new();
                let parts: &mut [VIdx] = if index.len() <= small.len() {
                    &mut small[..index.len()]
                } else {
                    large.resize(index.len(), VIdx::Full);
                    &mut large
                };
                for (slot, p) in parts.iter_mut().zip(index) {
                    *slot = match p {
                        RIndex::Full => VIdx::Full,
                        RIndex::NewAxis => VIdx::NewAxis,
                        RIndex::Ellipsis => VIdx::Ellipsis,
                        RIndex::Int(i) => VIdx::Int(Some(*i)),
                        RIndex::Slice(s, e) => VIdx::Slice(*s, *e),
                        RIndex::Expr(e) => match self.eval(e)? {
                            Value::Int(i) => VIdx::Int(Some(i)),
                            Value::Arr(x) if x.shape.rank() == 0 && x.cat.is_int() => {
                                VIdx::Int(x.item().map(|v| v as i64))
                            }
                            other => {
                                return Err(SimError::unsupported(format!(
                                    "indexing a value with a {} (only basic indexing is modelled)",
                                    describe(&other)
                                )));
                            }
                        },
                    };
                }
                Ok(Value::Arr(ops::index_value(&a, parts)?))
            }
            Value::Tuple(items) => {
                let k = match index {
                    [RIndex::Int(i)] => Some(*i),
                    [RIndex::Expr(e)] => py_int(&self.eval(e)?),
                    _ => None,
                };
                let Some(k) = k else {
                    return Err(te(
                        ErrorKind::TypeError,
                        "tuple indices must be integers or slices",
                    ));
                };
                let n = items.len() as i64;
                let kk = if k < 0 { k + n } else { k };
                items
                    .get(usize::try_from(kk).unwrap_or(usize::MAX))
                    .cloned()
                    .ok_or_else(|| te(ErrorKind::IndexError, "tuple index out of range"))
            }
            other => Err(te(
                ErrorKind::TypeError,
                format!("'{}' object is not subscriptable", other.type_name()),
            )),
        }
    }
}
