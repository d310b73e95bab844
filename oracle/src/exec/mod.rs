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
//! The runtime is split by concern, one `impl Runtime` per module:
//!
//! * this module: the value model, the runtime's state (slots, storages, budgets), running a
//!   plan, and reading a value as an int, a scalar or a tensor;
//! * [`stmt`]: statements: blocks, loops, `if`, assignments and in-place updates, `return`;
//! * [`expr`]: expressions: literals, tile attributes, arithmetic, comparisons, `hl.arange`,
//!   `hl.full`, casts, `.sum`, views and permutes;
//! * [`subscript`]: index lists and subscripting a value with them;
//! * [`host`]: host memory: allocations, reads of storages, stores and atomics.
//!
//! [`EvalErrorKind::AliasedInPlace`]: crate::EvalErrorKind::AliasedInPlace

mod expr;
mod host;
mod ops;
mod stmt;
mod subscript;

use crate::dense::DTensor;
use crate::error::{EvalErrorKind as K, Res, err};
use crate::output::{Output, Outputs};
use crate::plan::{CExpr, ParamInit, Plan};
use crate::ty::Ty;
use lang::ir::Span;
use ndarray::Array1;
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

/// A host storage: the elements of a torch storage, flat; a [`HostRef`] sees them with its
/// shape through ndarray's `into_shape_with_order`, so a store through one alias is visible
/// through every other.
struct Storage {
    name: String,
    ty: Ty,
    data: Arc<Array1<f64>>,
    /// Per element: written yet? Empty when every element is written.
    written: Array1<bool>,
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
    /// The departures of Helion's eager mode from torch reached so far (HelionEager only).
    divergences: Vec<crate::Divergence>,
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
                            Array1::default(0)
                        } else {
                            Array1::from_elem(n, false)
                        },
                        unwritten: if s.written { 0 } else { n },
                    }
                })
                .collect(),
            iterations: 0,
            work: 0,
            divergences: Vec::new(),
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
                ParamInit::Float { slot, value } => rt.slots[*slot] = Some(Value::Float(*value)),
            }
        }
        let outputs = match rt.block(&self.body)? {
            Flow::Return(outputs) if !outputs.is_empty() => outputs,
            // A kernel that returns nothing outputs what it wrote: its written tensor
            // parameters after the call.
            Flow::Return(_) | Flow::Normal if !self.written.is_empty() => {
                let mut outputs = Vec::with_capacity(self.written.len());
                for (i, name) in &self.written {
                    let ParamInit::Tensor { storage, shape, .. } = &self.params[*i] else {
                        unreachable!("written parameters are tensors")
                    };
                    let host = Value::Host(HostRef {
                        storage: *storage,
                        shape: Rc::new(shape.clone()),
                    });
                    outputs.push(Output {
                        name: name.clone(),
                        tensor: rt.output_tensor(host, name, self.kernel_span)?,
                    });
                }
                outputs
            }
            Flow::Return(_) | Flow::Normal => {
                return err(
                    K::NoReturn,
                    self.kernel_span,
                    "the kernel returns nothing and writes no tensor argument",
                );
            }
        };
        Ok(Outputs {
            outputs,
            magnitude: watermark.read(),
            dot_atol: watermark.dot_atol(),
            divergences: rt.divergences,
        })
    }
}

/// `cdiv(end - begin, block)` for `block > 0`, without overflow (saturating at the i64 range).
fn cdiv_span(begin: i64, end: i64, block: i64) -> i64 {
    let q =
        (i128::from(end) - i128::from(begin) + i128::from(block) - 1).div_euclid(i128::from(block));
    q.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl Runtime<'_> {
    fn charge(&mut self, n: usize, span: Span) -> Res<()> {
        self.work = self.work.saturating_add(n as u64);
        if self.work > MAX_WORK {
            return err(
                K::Budget,
                span,
                format!("the evaluation produced more than {MAX_WORK} tensor elements"),
            );
        }
        Ok(())
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

    /// A scalar view of a value for comparisons: `(value, is_int_exact)`.
    pub(super) fn scalar_of(&self, v: Value, span: Span) -> Res<(f64, Option<i64>)> {
        match v {
            Value::Int(i) => Ok((i as f64, Some(i))),
            Value::Float(f) => Ok((f, None)),
            Value::Tensor(t) if t.numel() == 1 => Ok((t.values()[0], None)),
            Value::Host(h) if h.shape.iter().product::<usize>() == 1 => {
                let t = self.host_read_all(&h, span)?;
                Ok((t.values()[0], None))
            }
            Value::Tensor(_) | Value::Host(_) => err(
                K::TypeError,
                span,
                "Boolean value of Tensor with more than one value is ambiguous",
            ),
            Value::Tile(_) => err(K::TypeError, span, "a tile cannot be compared"),
        }
    }

    pub(super) fn eval_index_int(&mut self, e: &CExpr, what: &str) -> Res<i64> {
        let v = self.eval(e)?;
        self.int_of(v, what, e.span)
    }

    /// An int from an int value or a one-element integer tensor (`__index__`).
    pub(super) fn int_of(&self, v: Value, what: &str, span: Span) -> Res<i64> {
        match v {
            Value::Int(i) => Ok(i),
            Value::Tensor(t) if t.numel() == 1 && !t.ty.is_float() => Ok(t.values()[0] as i64),
            Value::Host(h) => {
                let t = self.host_read_all(&h, span)?;
                if t.numel() == 1 && !t.ty.is_float() {
                    Ok(t.values()[0] as i64)
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

    pub(super) fn tensor_of(&mut self, v: Value, what: &str, span: Span) -> Res<Rc<DTensor>> {
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
}
