//! The interpreter: runs a [`Plan`] with eager semantics, statement by statement.
//!
//! * **Host tensors** live in storages (inputs, `torch.zeros/empty(_like)` allocations);
//!   `view_as`/`reshape`/… of a host tensor is an alias sharing the storage. Every storage
//!   tracks which elements were written: `torch.empty` memory (allocations and `torch.empty`
//!   inputs) starts unwritten, and reading an unwritten element — by a load, an atomic, an
//!   in-place update or a returned tensor — is an error, never a guess.
//! * **Loads** (`x[tile, :]`, `hl.load`) are snapshots, as Helion's `hl.load` is: a later store to
//!   `x` does not change an already-loaded value, but it does change every later load (so
//!   read-after-write defects are visible; spec §4 D1 evaluates to 8.0). Eager PyTorch would make
//!   the load a view; the reference refuses the one place that difference could show, an
//!   in-place `+=` on such a view ([`EvalErrorKind::AliasedInPlace`]).
//! * **Stores and atomics** mutate storages in program order; atomics apply element by element
//!   in row-major order of the indexed region (duplicate indices accumulate).
//! * **Loops** iterate `range(begin, end, block)` with the effective block size; a tile's
//!   `begin`/`end` are those of its live rows (`end` clipped at the loop end), `index` is the
//!   int32 vector of live indices, `count` is `cdiv(end - begin, block)` of its loop (with the
//!   loop's begin), `id` is `begin // block`, `block_size` the effective block size. A tile used
//!   as an index is the slice of its live rows; in a shape list it is its live length.
//! * **Scalars** are Python ints (exact, overflow beyond i64 is an error) and floats; device
//!   ints such as `live = outer.end - outer.begin` are Python ints.
//!
//! [`EvalErrorKind::AliasedInPlace`]: crate::EvalErrorKind::AliasedInPlace

use crate::dense::{
    self, DTensor, HOST_VIEW, MAX_NUMEL, Opnd, Scalar, broadcast_shapes, cast_value, expand,
    fresh_alias, norm_dim, reshape_shape,
};
use crate::error::{EvalErrorKind as K, Res, err};
use crate::index::{Ix, Selection, select};
use crate::output::{Output, Outputs};
use crate::plan::{CAllocShape, CExpr, CIndex, CK, CLoop, CStmt, CView, ParamInit, Plan, SK};
use crate::ty::{I64_EXACT, Ty, r32, rbf, wrap32};
use lang::ir::{AllocKind, AtomicOp, BinOp, CmpOp, LoopKind, Span, TileAttr};
use lang::tensor::Tensor;
use std::rc::Rc;
use std::sync::Arc;

/// The most loop iterations one evaluation may run (all loops together).
pub const MAX_ITERATIONS: u64 = 1_000_000;
/// The most tensor elements one evaluation may produce (all operations together).
pub const MAX_WORK: u64 = 100_000_000;

/// A tile of an `hl.tile` loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TileV {
    begin: i64,
    end: i64,
    block: i64,
    loop_begin: i64,
    loop_end: i64,
}

/// A host tensor: a storage and the shape it is seen with.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HostRef {
    storage: usize,
    shape: Rc<Vec<usize>>,
}

/// A runtime value.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    Int(i64),
    Float(f64),
    Tile(TileV),
    Tensor(Rc<DTensor>),
    Host(HostRef),
}

impl Value {
    fn kind_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "an int",
            Value::Float(_) => "a float",
            Value::Tile(_) => "a tile",
            Value::Tensor(_) => "a tensor",
            Value::Host(_) => "a host tensor",
        }
    }
}

struct Storage {
    name: String,
    ty: Ty,
    data: Arc<Vec<f64>>,
    /// Per element: written yet? Empty when every element is written.
    written: Vec<bool>,
    unwritten: usize,
}

enum Flow {
    Normal,
    /// The returned tensors, in return order.
    Return(Vec<Output>),
}

pub(crate) struct Runtime<'p> {
    plan: &'p Plan,
    slots: Vec<Option<Value>>,
    storages: Vec<Storage>,
    iterations: u64,
    work: u64,
}

impl Plan {
    /// Runs the plan once: the kernel's returned tensors, or why the case is invalid.
    pub fn run(&self) -> Res<Outputs> {
        let watermark = crate::dense::Watermark::start();
        let mut rt = Runtime {
            plan: self,
            slots: vec![None; self.names.len()],
            storages: self
                .storages
                .iter()
                .map(|s| {
                    let n = s.data.len();
                    Storage {
                        name: s.name.clone(),
                        ty: s.ty,
                        data: Arc::clone(&s.data),
                        written: if s.written {
                            Vec::new()
                        } else {
                            vec![false; n]
                        },
                        unwritten: if s.written { 0 } else { n },
                    }
                })
                .collect(),
            iterations: 0,
            work: 0,
        };
        for p in &self.params {
            match p {
                ParamInit::Tensor {
                    slot,
                    storage,
                    shape,
                } => {
                    rt.slots[*slot] = Some(Value::Host(HostRef {
                        storage: *storage,
                        shape: Rc::new(shape.clone()),
                    }));
                }
                ParamInit::Int { slot, value } => rt.slots[*slot] = Some(Value::Int(*value)),
            }
        }
        match rt.block(&self.body)? {
            Flow::Return(outputs) => Ok(Outputs {
                outputs,
                magnitude: watermark.read(),
            }),
            Flow::Normal => err(K::NoReturn, self.kernel_span, "the kernel returns nothing"),
        }
    }
}

/// `cdiv(end - begin, block)` for `block > 0`, without overflow (saturating at the i64 range).
fn cdiv_span(begin: i64, end: i64, block: i64) -> i64 {
    let q =
        (i128::from(end) - i128::from(begin) + i128::from(block) - 1).div_euclid(i128::from(block));
    q.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

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
            if matches!(op, BinOp::Div | BinOp::FloorDiv) && y == 0.0 {
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

/// Whether torch can cast a result of type `from` into an existing tensor of type `to`
/// (`can_cast`: no float into an integer tensor).
fn can_cast(from: Ty, to: Ty) -> bool {
    !from.is_float() || to.is_float()
}

/// `a + b` in type `ty` (`a` and `b` exact in `ty`), as an atomic add computes it.
fn add_in(ty: Ty, a: f64, b: f64) -> f64 {
    match ty {
        Ty::F32 => r32(a + b),
        Ty::Bf16 => rbf(a + b),
        Ty::I32 => wrap32(a + b),
        Ty::I64 => a + b,
    }
}

impl Runtime<'_> {
    fn charge(&mut self, n: usize, span: Span) -> Res<()> {
        self.work += n as u64;
        if self.work > MAX_WORK {
            return err(
                K::Budget,
                span,
                format!("the evaluation produced more than {MAX_WORK} tensor elements"),
            );
        }
        Ok(())
    }

    fn block(&mut self, body: &[CStmt]) -> Res<Flow> {
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
                    return err(K::NoReturn, s.span, "the kernel returns nothing");
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

    fn output_tensor(&self, v: Value, name: &str, span: Span) -> Res<Tensor> {
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
                DTensor {
                    ty: s.ty,
                    shape: h.shape.to_vec(),
                    data: s.data.to_vec(),
                    alias: 0,
                }
            }
            Value::Tensor(t) => Rc::try_unwrap(t).unwrap_or_else(|t| (*t).clone()),
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
        let Some(dtype) = t.ty.dtype() else {
            return err(
                K::NoReturn,
                span,
                format!(
                    "the kernel returns an {} tensor (`{name}`), which no case dtype holds",
                    t.ty.name()
                ),
            );
        };
        let mut t = t;
        Ok(Tensor {
            dtype,
            shape: std::mem::take(&mut t.shape),
            values: std::mem::take(&mut t.data),
        })
    }

    fn host_target(&mut self, e: &CExpr) -> Res<HostRef> {
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

    /// A scalar view of a value for comparisons: `(value, is_int_exact)`.
    fn scalar_of(&self, v: Value, span: Span) -> Res<(f64, Option<i64>)> {
        match v {
            Value::Int(i) => Ok((i as f64, Some(i))),
            Value::Float(f) => Ok((f, None)),
            Value::Tensor(t) if t.numel() == 1 => Ok((t.data[0], None)),
            Value::Host(h) if h.shape.iter().product::<usize>() == 1 => {
                let t = self.host_read_all(&h, span)?;
                Ok((t.data[0], None))
            }
            Value::Tensor(_) | Value::Host(_) => err(
                K::TypeError,
                span,
                "Boolean value of Tensor with more than one value is ambiguous",
            ),
            Value::Tile(_) => err(K::TypeError, span, "a tile cannot be compared"),
        }
    }

    fn compare(&self, op: CmpOp, a: Value, b: Value, span: Span) -> Res<bool> {
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

    fn eval_index_int(&mut self, e: &CExpr, what: &str) -> Res<i64> {
        let v = self.eval(e)?;
        self.int_of(v, what, e.span)
    }

    /// An int from an int value or a one-element integer tensor (`__index__`).
    fn int_of(&self, v: Value, what: &str, span: Span) -> Res<i64> {
        match v {
            Value::Int(i) => Ok(i),
            Value::Tensor(t) if t.numel() == 1 && !t.ty.is_float() => Ok(t.data[0] as i64),
            Value::Host(h) => {
                let t = self.host_read_all(&h, span)?;
                if t.numel() == 1 && !t.ty.is_float() {
                    Ok(t.data[0] as i64)
                } else {
                    err(
                        K::TypeError,
                        span,
                        format!("{what} must be an int, got a tensor"),
                    )
                }
            }
            other => err(
                K::TypeError,
                span,
                format!("{what} must be an int, got {}", other.kind_name()),
            ),
        }
    }

    fn get(&self, slot: usize, span: Span) -> Res<Value> {
        match &self.slots[slot] {
            Some(v) => Ok(v.clone()),
            None => err(
                K::UnboundName,
                span,
                format!("name `{}` is not bound on this path", self.plan.names[slot]),
            ),
        }
    }

    fn tensor_of(&mut self, v: Value, what: &str, span: Span) -> Res<Rc<DTensor>> {
        match v {
            Value::Tensor(t) => Ok(t),
            Value::Host(h) => Ok(Rc::new(self.host_read_all(&h, span)?)),
            other => err(
                K::TypeError,
                span,
                format!("{what} needs a tensor, got {}", other.kind_name()),
            ),
        }
    }

    fn host_read_all(&self, h: &HostRef, span: Span) -> Res<DTensor> {
        let sel = select(&h.shape, &[], span)?;
        let data = self.host_gather(h, &sel, span)?;
        Ok(DTensor {
            ty: self.storages[h.storage].ty,
            shape: h.shape.to_vec(),
            data,
            alias: HOST_VIEW | h.storage as u64,
        })
    }

    fn host_gather(&self, h: &HostRef, sel: &Selection, span: Span) -> Res<Vec<f64>> {
        let s = &self.storages[h.storage];
        let count = if s.unwritten > 0 {
            sel.count_unwritten(&s.written)
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
        Ok(sel.gather(&s.data))
    }

    fn indices(&mut self, ixs: &[CIndex]) -> Res<Vec<Ix>> {
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
                return Ok(Ix::Slice {
                    start: Some(t.begin),
                    stop: Some(t.end),
                    step: 1,
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
        if t.shape.is_empty() {
            return Ok(Ix::Int(t.data[0] as i64));
        }
        Ok(Ix::Tensor(t))
    }

    fn eval(&mut self, e: &CExpr) -> Res<Value> {
        let span = e.span;
        Ok(match &e.kind {
            CK::Name(s) => self.get(*s, span)?,
            CK::Int(v) => Value::Int(*v),
            CK::Float(v) => Value::Float(*v),
            CK::Size(v, dim) => {
                let v = self.eval(v)?;
                let shape: Vec<usize> = match &v {
                    Value::Tensor(t) => t.shape.clone(),
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
                let d = norm_dim(*dim, shape.len(), 0, ".size", span).map_err(|mut x| {
                    x.kind = K::IndexOutOfRange;
                    x
                })?;
                Value::Int(shape[d] as i64)
            }
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
                        Value::Tensor(Rc::new(DTensor::new(Ty::I32, vec![n], data)))
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
                Value::Tensor(Rc::new(DTensor::new(Ty::I32, vec![n], data)))
            }
            CK::Full(shape, value, ty) => {
                let shape = self.shape_list(shape, span)?;
                let n = shape.iter().product::<usize>();
                let fill = match value {
                    None => 0.0,
                    Some(v) => {
                        let v = self.eval(v)?;
                        let (x, from) = match v {
                            Value::Int(i) => (i as f64, Ty::I64),
                            Value::Float(f) => (f, Ty::F32),
                            Value::Tensor(t) if t.numel() == 1 => (t.data[0], t.ty),
                            other => {
                                return err(
                                    K::TypeError,
                                    span,
                                    format!("hl.full fill value is {}", other.kind_name()),
                                );
                            }
                        };
                        cast_value(x, from, *ty, span)?
                    }
                };
                self.charge(n, span)?;
                Value::Tensor(Rc::new(DTensor::new(*ty, shape, vec![fill; n])))
            }
            CK::Cast(v, ty) => {
                let v = self.eval(v)?;
                let t = self.tensor_of(v, "a cast", span)?;
                let t = Rc::try_unwrap(t).unwrap_or_else(|t| (*t).clone());
                if t.ty != *ty {
                    self.charge(t.numel(), span)?;
                }
                Value::Tensor(Rc::new(dense::cast(t, *ty, span)?))
            }
            CK::Sum(v, dim) => {
                let v = self.eval(v)?;
                let t = self.tensor_of(v, ".sum", span)?;
                let d = norm_dim(*dim, t.shape.len(), 0, ".sum", span)?;
                self.charge(t.numel(), span)?;
                if t.shape.is_empty() {
                    let ty = if t.ty.is_float() { t.ty } else { Ty::I64 };
                    Value::Tensor(Rc::new(DTensor::new(ty, vec![], t.data.clone())))
                } else {
                    let (ty, data) = crate::sum::sum_dim(t.ty, &t.shape, &t.data, d);
                    if !ty.is_float() && data.iter().any(|v| v.abs() > I64_EXACT) {
                        return err(
                            K::Overflow,
                            span,
                            "an int64 sum leaves the exact range ±2^53",
                        );
                    }
                    let mut shape = t.shape.clone();
                    shape.remove(d);
                    Value::Tensor(Rc::new(DTensor::new(ty, shape, data)))
                }
            }
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
        })
    }

    fn shape_list(&mut self, dims: &[CExpr], span: Span) -> Res<Vec<usize>> {
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

    fn alloc(
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
                Value::Tensor(t) => (t.shape.clone(), Some(t.ty)),
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
            AllocKind::Zeros => (vec![0.0; n], Vec::new(), 0),
            AllocKind::Empty => (
                vec![lang::ir::inputs::poison(case_dtype); n],
                vec![false; n],
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

    fn view(&mut self, v: Value, op: &CView, span: Span) -> Res<Value> {
        let (shape, numel): (Vec<usize>, usize) = match &v {
            Value::Tensor(t) => (t.shape.clone(), t.numel()),
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
                    Value::Tensor(t) => t.shape.clone(),
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
                let mut t = Rc::try_unwrap(t).unwrap_or_else(|t| (*t).clone());
                t.shape = new_shape;
                Value::Tensor(Rc::new(t))
            }
            Value::Host(h) => Value::Host(HostRef {
                storage: h.storage,
                shape: Rc::new(new_shape),
            }),
            _ => unreachable!("checked above"),
        })
    }

    fn index(&mut self, base: Value, ixs: &[Ix], span: Span) -> Res<Value> {
        let clamped;
        let ixs = match self.plan.tiling {
            crate::plan::Tiling::Effective => ixs,
            crate::plan::Tiling::HelionEager => {
                let shape = match &base {
                    Value::Host(h) => h.shape.to_vec(),
                    Value::Tensor(t) => t.shape.clone(),
                    _ => Vec::new(),
                };
                clamped = crate::index::clamp_tensor_indices(&shape, ixs);
                &clamped[..]
            }
        };
        match base {
            Value::Host(h) => {
                let sel = select(&h.shape, ixs, span)?;
                self.charge(sel.numel(), span)?;
                let data = self.host_gather(&h, &sel, span)?;
                let alias = if sel.basic {
                    HOST_VIEW | h.storage as u64
                } else {
                    fresh_alias()
                };
                Ok(Value::Tensor(Rc::new(DTensor {
                    ty: self.storages[h.storage].ty,
                    shape: sel.shape,
                    data,
                    alias,
                })))
            }
            Value::Tensor(t) => {
                let sel = select(&t.shape, ixs, span)?;
                self.charge(sel.numel(), span)?;
                let data = sel.gather(&t.data);
                let alias = if sel.basic { t.alias } else { fresh_alias() };
                Ok(Value::Tensor(Rc::new(DTensor {
                    ty: t.ty,
                    shape: sel.shape,
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

    fn binary(&mut self, op: BinOp, a: Value, b: Value, span: Span) -> Res<Value> {
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

    fn aug_assign(&mut self, slot: usize, op: BinOp, value: &CExpr, span: Span) -> Res<()> {
        let cur = self.get(slot, span)?;
        let v = self.eval(value)?;
        match cur {
            Value::Tensor(t) => {
                if t.alias & HOST_VIEW != 0 {
                    return err(
                        K::AliasedInPlace,
                        span,
                        format!(
                            "`{} {}= ...` updates a view of a host tensor in place: eager PyTorch writes through it, a compiled kernel does not",
                            self.plan.names[slot],
                            op.symbol()
                        ),
                    );
                }
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
                let mut r = self.in_place_result(&t.shape, t.ty, r, span)?;
                r.alias = t.alias;
                self.slots[slot] = Some(Value::Tensor(Rc::new(r)));
            }
            Value::Host(h) => {
                let whole = self.host_read_all(&h, span)?;
                let ty = whole.ty;
                let shape = whole.shape.clone();
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
        if r.shape != shape {
            return err(
                K::ShapeMismatch,
                span,
                format!(
                    "output with shape {shape:?} doesn't match the broadcast shape {:?}",
                    r.shape
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

    /// The values of `v` broadcast to `shape` and cast to `ty`, as `tensor[idx] = v` does
    /// (leading size-1 dims of `v` are dropped first, as torch's setitem does).
    fn values_for(&self, v: Value, shape: &[usize], ty: Ty, span: Span) -> Res<Vec<f64>> {
        let n: usize = shape.iter().product();
        let t = match v {
            Value::Int(i) => return Ok(vec![cast_value(i as f64, Ty::I64, ty, span)?; n]),
            Value::Float(f) => return Ok(vec![cast_value(f, Ty::F32, ty, span)?; n]),
            Value::Tile(_) => return err(K::TypeError, span, "a tile cannot be stored"),
            Value::Tensor(t) => t,
            Value::Host(h) => Rc::new(self.host_read_all(&h, span)?),
        };
        let mut vshape: &[usize] = &t.shape;
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
                    t.shape
                ),
            );
        }
        let mut data = expand(&t.data, vshape, shape);
        if t.ty != ty {
            for x in data.iter_mut() {
                *x = cast_value(*x, t.ty, ty, span)?;
            }
        }
        Ok(data)
    }

    fn store(&mut self, h: &HostRef, ixs: &[Ix], v: Value, span: Span) -> Res<()> {
        let sel = select(&h.shape, ixs, span)?;
        let ty = self.storages[h.storage].ty;
        let vals = self.values_for(v, &sel.shape, ty, span)?;
        self.charge(vals.len(), span)?;
        let s = &mut self.storages[h.storage];
        let data = Arc::make_mut(&mut s.data);
        let mut k = 0;
        if s.unwritten > 0 {
            let (written, unwritten) = (&mut s.written, &mut s.unwritten);
            sel.for_each(|o| {
                data[o] = vals[k];
                k += 1;
                if !written[o] {
                    written[o] = true;
                    *unwritten -= 1;
                }
            });
            if s.unwritten == 0 {
                s.written = Vec::new();
            }
        } else {
            sel.for_each(|o| {
                data[o] = vals[k];
                k += 1;
            });
        }
        Ok(())
    }

    fn atomic(
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
        let bitwise = matches!(op, AtomicOp::And | AtomicOp::Or | AtomicOp::Xor);
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
        let exp = match (op, expected) {
            (AtomicOp::Cas, Some(x)) => Some(self.values_for(x, &sel.shape, ty, span)?),
            (AtomicOp::Cas, None) => {
                return err(K::TypeError, span, "hl.atomic_cas needs an expected value");
            }
            _ => None,
        };
        self.charge(vals.len(), span)?;
        let s = &mut self.storages[h.storage];
        let data = Arc::make_mut(&mut s.data);
        let mut k = 0;
        sel.for_each(|o| {
            let (cur, x) = (data[o], vals[k]);
            data[o] = match op {
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
                    if exp.as_ref().is_some_and(|e| e[k] == cur) {
                        x
                    } else {
                        cur
                    }
                }
            };
            k += 1;
        });
        Ok(())
    }
}
