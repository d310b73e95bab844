//! The interpreter: runs a resolved kernel body in one of two modes.
//!
//! * **Tracing** (once per module): every array is traced (type only), the grid index and
//!   loop indices are traced, and every code path is visited as JAX traces it — both branches
//!   of a `cond`, each `fori_loop`/`emit_pipeline` body once, every iteration of a Python
//!   `for`. Static errors (a `pl.ds` with a static out-of-range start, shape and dtype
//!   mismatches, branch and carry type mismatches) are raised here with stage `trace`.
//! * **Running**: concrete values; only the taken branch and the real trip counts. Dynamic
//!   out-of-range reads and writes are raised here with stage `run` (TPU interpreter) or
//!   clamped (generic interpreter).
//!
//! The interpreter is one [`Machine`]; its methods are split by what they interpret:
//!
//! * `stmt`: statements and control flow (function calls, `for`, `pl.when`, `lax.fori_loop`,
//!   `lax.cond`, `pltpu.emit_pipeline`).
//! * `expr`: expressions (names, literals, Python and JAX arithmetic, value indexing).
//! * `jnp`: `jnp` and `lax` array calls, and XLA's merge of nested sums.
//! * `refs`: Refs: `.at[...]` and reshape views, bounds checks, reads and writes.
//! * `dma`: `pltpu.make_async_copy` and its semaphores.
//!
//! This module owns the machine's state (buffers, slots, the grid point, the step budget),
//! the value conversions the others share, and the grid order.

mod dma;
mod expr;
mod jnp;
mod refs;
mod stmt;

use super::error::{ErrorKind, SimError, SimResult};
use super::resolve::Resolved;
use super::value::{Arr, Cat, MAX_RANK, Shape, Value};
use dma::Pending;
use std::borrow::Cow;

/// One kernel buffer (operand, output or scratch).
#[derive(Clone, Debug)]
pub(crate) struct Buffer<'i> {
    /// Element category.
    pub cat: Cat,
    /// Shape.
    pub shape: Shape,
    /// Row-major values (empty while tracing). An operand that needs no padding borrows its
    /// input until the kernel writes it (most never do): copying every input was 2.3% of the
    /// executor's instructions (callgrind, 2,000 cases).
    pub data: Cow<'i, [f64]>,
    /// A DMA semaphore array: addressable (`sem.at[k]`), never read or written as data.
    pub sem: bool,
}

/// The interpreter state.
pub(crate) struct Machine<'p> {
    res: &'p Resolved,
    slots: Vec<Value>,
    /// Kernel buffers.
    pub bufs: Vec<Buffer<'p>>,
    tracing: bool,
    /// Generic-interpreter semantics (dynamic out-of-range accesses clamp).
    generic: bool,
    /// Current grid point.
    pub pid: [i64; MAX_RANK],
    /// Grid rank.
    pub grid_rank: usize,
    /// Statements left before the run is stopped.
    pub steps_left: u64,
    /// The first error the generic interpreter raises at trace time that the TPU interpreter
    /// does not (a static slice out of range), found while tracing.
    pub generic_error: Option<SimError>,
    stack: Vec<usize>,
    /// Issued DMAs per semaphore element (buffer, flat offset), oldest first. They persist
    /// across grid steps, like the semaphores.
    dma: std::collections::HashMap<(usize, usize), std::collections::VecDeque<Pending>>,
}

fn te(kind: ErrorKind, msg: impl Into<String>) -> SimError {
    SimError::trace(kind, msg)
}

/// A Python int that fits int32, as a weak int32 array.
fn weak_int(v: i64) -> SimResult<Arr> {
    if i32::try_from(v).is_err() {
        return Err(te(
            ErrorKind::OverflowError,
            format!("Python int {v} too large to convert to int32"),
        ));
    }
    Ok(Arr::konst(Cat::WeakInt, v as f64))
}

/// Converts a Python scalar or array to an array (as JAX does for an operand).
fn arr_of(v: &Value) -> SimResult<Arr> {
    match v {
        Value::Int(i) => weak_int(*i),
        Value::Float(f) => Ok(Arr::konst(Cat::WeakFloat, Cat::WeakFloat.round(*f))),
        Value::Bool(b) => Ok(Arr::konst(Cat::Bool, f64::from(u8::from(*b)))),
        Value::Arr(a) => Ok(a.clone()),
        Value::Ref(_) => Err(te(
            ErrorKind::TypeError,
            "a Ref used as an array value (read it with `ref[...]`)",
        )),
        Value::Unbound | Value::None | Value::Ds { .. } | Value::Tuple(_) | Value::Func(_) => {
            Err(te(
                ErrorKind::TypeError,
                format!("{} is not a valid JAX type", v.type_name()),
            ))
        }
    }
}

/// [`arr_of`] borrowing an array operand (an operation that only reads its operands need not
/// move them out of their values).
fn as_arr(v: &Value) -> SimResult<Cow<'_, Arr>> {
    match v {
        Value::Arr(a) => Ok(Cow::Borrowed(a)),
        other => arr_of(other).map(Cow::Owned),
    }
}

/// [`arr_of`] of a value no longer needed: an array is moved, not cloned.
fn into_arr(v: Value) -> SimResult<Arr> {
    match v {
        Value::Arr(a) => Ok(a),
        other => arr_of(&other),
    }
}

/// Steps `idx` to the next row-major index below `dims` (the order a Pallas grid runs in);
/// false after the last one.
pub(crate) fn next_grid_index(idx: &mut [i64], dims: &[i64]) -> bool {
    for k in (0..dims.len()).rev() {
        idx[k] += 1;
        if idx[k] < dims[k] {
            return true;
        }
        idx[k] = 0;
    }
    false
}

fn describe(v: &Value) -> String {
    match v {
        Value::Arr(a) => format!("{}{:?}", a.cat.name(), a.shape),
        Value::Tuple(items) => format!(
            "({})",
            items.iter().map(describe).collect::<Vec<_>>().join(", ")
        ),
        other => other.type_name().to_string(),
    }
}

/// The value of a Python int-like (`int`, `bool`).
fn py_int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

impl<'p> Machine<'p> {
    /// A machine over `res` with `bufs`.
    pub fn new(
        res: &'p Resolved,
        bufs: Vec<Buffer<'p>>,
        tracing: bool,
        generic: bool,
    ) -> Machine<'p> {
        Machine {
            res,
            slots: vec![Value::Unbound; res.slots()],
            bufs,
            tracing,
            generic,
            pid: [0; MAX_RANK],
            grid_rank: 0,
            steps_left: u64::MAX,
            generic_error: None,
            stack: Vec::new(),
            dma: std::collections::HashMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Empty windows of Refs. A window with a zero-size dim can have a start offset past the
    //! end of its buffer (`x[0:0, 2:3]` on a `(0, 4)` buffer: offset 2 into no data); a read
    //! or write of it must be an empty value / a no-op, never a slice panic.

    use crate::{ErrorKind, Interpreter, Program, SimError, SimOptions};
    use lang::pallas::{
        BinOp, Expr as E, Function, IndexPart as I, Launcher, Operand, OperandSource, Output,
        PaddingFill, PallasModule, Stmt as S,
    };
    use lang::tensor::{DType, Tensor};

    /// How a window indexes one dim of the Ref.
    #[derive(Clone, Copy, Debug)]
    enum Win {
        /// A static slice `a:b`.
        Slice(i64, i64),
        /// `pl.ds(k, size)` with a static start.
        Ds(i64, i64),
        /// `pl.ds(pl.program_id(0) + k, size)`: a traced start (`program_id` is 0).
        DynDs(i64, i64),
        /// `pl.program_id(0) + k`: a traced integer (drops the dim).
        DynInt(i64),
    }

    fn index(w: &[Win]) -> Vec<I> {
        let dyn_k = |k: i64| E::Binary {
            op: BinOp::Add,
            lhs: Box::new(E::ProgramId(0)),
            rhs: Box::new(E::Int(k)),
        };
        w.iter()
            .map(|&p| match p {
                Win::Slice(a, b) => I::Slice {
                    start: Some(a),
                    stop: Some(b),
                },
                Win::Ds(k, n) => I::Expr(E::ds(E::Int(k), E::Int(n))),
                Win::DynDs(k, n) => I::Expr(E::ds(dyn_k(k), E::Int(n))),
                Win::DynInt(k) => I::Expr(dyn_k(k)),
            })
            .collect()
    }

    /// The window's shape (Python's slice clipping for static slices).
    fn window_shape(shape: &[i64], w: &[Win]) -> Vec<i64> {
        let mut out = Vec::new();
        for (&n, &p) in shape.iter().zip(w) {
            match p {
                Win::Slice(a, b) => out.push((b.min(n) - a.min(n)).max(0)),
                Win::Ds(_, size) | Win::DynDs(_, size) => out.push(size),
                Win::DynInt(_) => {}
            }
        }
        out
    }

    /// A kernel `_k(x0, o0)` on a grid of one step.
    fn module(x: &[i64], o: &[i64], body: Vec<S>) -> PallasModule {
        PallasModule {
            doc: vec!["empty window probe".into()],
            kernel: Function {
                name: "_k".into(),
                params: vec!["x0".into(), "o0".into()],
                body,
            },
            launcher: Launcher {
                kernel: "_k".into(),
                params: vec!["x0".into()],
                grid: vec![1],
                operands: vec![Operand {
                    source: OperandSource::Param(0),
                    dtype: DType::Float32,
                    shape: x.to_vec(),
                    pad_after: vec![0; x.len()],
                    block: vec![lang::pallas::BlockDim::Whole; x.len()],
                }],
                outputs: vec![Output {
                    dtype: DType::Float32,
                    shape: o.to_vec(),
                    pad_after: vec![0; o.len()],
                    aliases: None,
                }],
                scratch: vec![],
                returns: vec![0],
                padding: PaddingFill::Zero,
            },
        }
    }

    fn input(shape: &[i64]) -> Tensor {
        let shape: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let n: usize = shape.iter().product();
        Tensor::new(DType::Float32, shape, (0..n).map(|v| v as f64).collect())
    }

    fn sim(m: &PallasModule, x: &[i64], interp: Interpreter) -> Result<Vec<Tensor>, SimError> {
        let options = SimOptions {
            interpreter: interp,
            ..SimOptions::default()
        };
        Program::new(m).and_then(|p| p.run(&[input(x)], &options))
    }

    /// `o0[...] = x0[w]` on an `x`-shaped input.
    fn read(x: &[i64], w: &[Win], interp: Interpreter) -> Result<Vec<Tensor>, SimError> {
        let o = window_shape(x, w);
        let body = vec![S::Store {
            target: E::name("o0"),
            index: vec![I::Ellipsis],
            value: E::name("x0").index(index(w)),
        }];
        sim(&module(x, &o, body), x, interp)
    }

    /// `o0[w] = x0[...]` into an `o`-shaped output.
    fn write(o: &[i64], w: &[Win], interp: Interpreter) -> Result<Vec<Tensor>, SimError> {
        let x = window_shape(o, w);
        let body = vec![S::Store {
            target: E::name("o0"),
            index: index(w),
            value: E::name("x0").index(vec![I::Ellipsis]),
        }];
        sim(&module(&x, o, body), &x, interp)
    }

    const BOTH: [Interpreter; 2] = [Interpreter::Tpu, Interpreter::Generic];

    /// Empty windows whose start offset lies past the end of their (empty) buffer: a read
    /// is an empty value of the window's shape, a write a no-op, with both interpreters.
    #[test]
    fn empty_window_past_the_end_of_an_empty_buffer_reads_and_writes_nothing() {
        use Win::*;
        let cases: &[(&[i64], &[Win])] = &[
            // A start offset of 2 into no data.
            (&[0, 4], &[Slice(0, 0), Slice(2, 3)]),
            (&[0, 4], &[Slice(0, 0), Slice(3, 4)]),
            (&[0, 4], &[Slice(0, 0), Slice(2, 2)]),
            (&[0, 4], &[Slice(0, 0), DynInt(2)]),
            (&[0, 4], &[Ds(0, 0), Ds(2, 1)]),
            (&[0, 4], &[Ds(0, 0), Ds(3, 0)]),
            (&[0, 4], &[DynDs(0, 0), DynDs(2, 2)]),
            (&[0, 4], &[DynDs(0, 0), DynInt(3)]),
            (&[4, 0], &[Slice(3, 3), Slice(0, 0)]),
            (&[4, 0], &[DynDs(3, 1), Slice(0, 0)]),
            (&[4, 0], &[DynInt(3), Slice(0, 0)]),
            (&[2, 0, 3], &[Slice(1, 1), Slice(0, 0), Slice(2, 3)]),
            (&[2, 0, 3], &[Ds(1, 1), Slice(0, 0), DynInt(2)]),
            (&[2, 0, 3], &[DynInt(1), DynDs(0, 0), DynDs(1, 2)]),
            (&[2, 0, 3], &[DynDs(1, 0), Ds(0, 0), Ds(2, 1)]),
            (&[3, 2, 0], &[DynInt(2), DynInt(1), Slice(0, 0)]),
            (&[3, 2, 0], &[Ds(2, 1), Ds(1, 1), Ds(0, 0)]),
            (&[0, 2, 3], &[Slice(0, 0), DynInt(1), DynDs(2, 1)]),
            (&[0, 2, 3], &[Ds(0, 0), Slice(1, 2), Slice(2, 3)]),
        ];
        for &(shape, w) in cases {
            let expect: Vec<usize> = window_shape(shape, w).iter().map(|&d| d as usize).collect();
            for interp in BOTH {
                let what = format!("{shape:?}[{w:?}] ({interp:?})");
                let out = read(shape, w, interp).unwrap_or_else(|e| panic!("read {what}: {e}"));
                assert_eq!(out[0].shape, expect, "read {what}");
                assert!(out[0].values.is_empty(), "read {what}");
                let out = write(shape, w, interp).unwrap_or_else(|e| panic!("write {what}: {e}"));
                let whole: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
                assert_eq!(out[0].shape, whole, "write {what}");
                assert!(out[0].values.is_empty(), "write {what}");
            }
        }
    }

    /// The same through Ref transforms: an empty `.at[...]` window (offset past its buffer)
    /// reshaped, and a reshape of an empty buffer windowed at a nonzero start.
    #[test]
    fn empty_window_through_ref_transforms_reads_nothing() {
        let at = |base: E, w: &[Win]| E::At {
            base: Box::new(base),
            index: index(w),
        };
        let reshape = |base: E, shape: &[i64]| E::RefReshape {
            base: Box::new(base),
            shape: shape.to_vec(),
        };
        use Win::*;
        // (input, the read Ref, its shape)
        let cases: Vec<(&[i64], E, &[i64])> = vec![
            (
                &[0, 4],
                at(E::name("x0"), &[Slice(0, 0), Slice(2, 3)]).index(index(&[Ds(0, 0), Ds(0, 1)])),
                &[0, 1],
            ),
            (
                &[0, 4],
                reshape(at(E::name("x0"), &[Slice(0, 0), Slice(2, 3)]), &[1, 0])
                    .index(vec![I::Ellipsis]),
                &[1, 0],
            ),
            (
                &[0, 4],
                reshape(E::name("x0"), &[4, 0]).index(index(&[DynDs(3, 1), Slice(0, 0)])),
                &[1, 0],
            ),
            (
                &[2, 0, 3],
                reshape(E::name("x0"), &[3, 2, 0]).index(index(&[
                    DynInt(2),
                    Ds(1, 1),
                    Slice(0, 0),
                ])),
                &[1, 0],
            ),
        ];
        for (x, value, o) in cases {
            for interp in BOTH {
                let what = format!("{value:?} ({interp:?})");
                let body = vec![S::Store {
                    target: E::name("o0"),
                    index: vec![I::Ellipsis],
                    value: value.clone(),
                }];
                let out = sim(&module(x, o, body), x, interp)
                    .unwrap_or_else(|e| panic!("read {what}: {e}"));
                let expect: Vec<usize> = o.iter().map(|&d| d as usize).collect();
                assert_eq!(out[0].shape, expect, "{what}");
                assert!(out[0].values.is_empty(), "{what}");
            }
        }
    }

    /// Empty windows on non-empty buffers, at the end of a dim (generic interpreter: kept,
    /// so the offset is the buffer's length or past it in a later dim) or at any start
    /// inside it (both interpreters).
    #[test]
    fn empty_window_at_the_end_of_a_nonempty_buffer_reads_and_writes_nothing() {
        use Win::*;
        let generic: &[(&[i64], &[Win])] = &[
            (&[3, 4], &[Slice(3, 3), Slice(3, 4)]),
            (&[3, 4], &[DynDs(3, 0), DynDs(3, 1)]),
            (&[3, 4], &[DynDs(2, 1), DynDs(4, 0)]),
            (&[3, 4], &[DynInt(2), DynDs(4, 0)]),
            (&[2, 3, 4], &[DynDs(2, 0), DynInt(2), DynDs(3, 1)]),
        ];
        let both: &[(&[i64], &[Win])] = &[
            (&[3, 4], &[Slice(1, 1), Slice(3, 4)]),
            (&[3, 4], &[DynDs(2, 0), DynDs(3, 1)]),
            (&[3, 4], &[DynInt(2), Ds(3, 0)]),
            (&[2, 3, 4], &[DynInt(1), DynDs(2, 0), Slice(1, 4)]),
        ];
        let runs = generic
            .iter()
            .map(|c| (c, &[Interpreter::Generic][..]))
            .chain(both.iter().map(|c| (c, &BOTH[..])));
        for (&(shape, w), interps) in runs {
            let expect: Vec<usize> = window_shape(shape, w).iter().map(|&d| d as usize).collect();
            for &interp in interps {
                let what = format!("{shape:?}[{w:?}] ({interp:?})");
                let out = read(shape, w, interp).unwrap_or_else(|e| panic!("read {what}: {e}"));
                assert_eq!(out[0].shape, expect, "read {what}");
                assert!(out[0].values.is_empty(), "read {what}");
                write(shape, w, interp).unwrap_or_else(|e| panic!("write {what}: {e}"));
            }
        }
    }

    /// Non-empty windows out of range keep their errors; an empty window starting at the
    /// end of a non-empty dim is "entirely out of bounds" for the TPU interpreter (as today).
    #[test]
    fn out_of_range_windows_keep_their_errors() {
        use Win::*;
        let tpu = Interpreter::Tpu;
        let e = read(&[0, 4], &[DynDs(0, 1), Slice(2, 3)], tpu).unwrap_err();
        assert_eq!(e.kind, ErrorKind::IndexError);
        assert_eq!(
            e.message,
            "Out-of-bounds read of buffer 0: [0:1, 2:3] but it has shape [0, 4]"
        );
        let e = write(&[0, 4], &[DynDs(0, 1), Slice(2, 3)], tpu).unwrap_err();
        assert_eq!(e.kind, ErrorKind::ValueError, "{}", e.message);
        assert!(
            e.message.starts_with("Out-of-bounds swap of buffer 1"),
            "{}",
            e.message
        );
        let e = read(&[3, 4], &[DynDs(3, 0), Slice(0, 4)], tpu).unwrap_err();
        assert_eq!(e.kind, ErrorKind::IndexError, "{}", e.message);
        // The generic interpreter refuses a `dynamic_slice` larger than its dim when tracing.
        let e = read(&[0, 4], &[DynDs(0, 1), Slice(2, 3)], Interpreter::Generic).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TypeError, "{}", e.message);
    }

    /// A sweep of windows with zero-size dims (and some without) on small shapes: nothing
    /// panics, and a read that succeeds has the window's shape.
    #[test]
    fn windows_on_small_shapes_never_panic() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: i64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % m as u64) as i64
        };
        for _ in 0..3000 {
            let rank = 1 + next(3) as usize;
            let shape: Vec<i64> = (0..rank).map(|_| next(4)).collect();
            let w: Vec<Win> = shape
                .iter()
                .map(|&n| {
                    let k = next(n + 2);
                    match next(4) {
                        0 => Win::Slice(k, k + next(3) - 1),
                        1 => Win::Ds(k, next(2)),
                        2 => Win::DynDs(k, next(n + 1)),
                        _ => Win::DynInt(k),
                    }
                })
                .collect();
            let expect: Vec<usize> = window_shape(&shape, &w)
                .iter()
                .map(|&d| d as usize)
                .collect();
            for interp in BOTH {
                if let Ok(out) = read(&shape, &w, interp) {
                    assert_eq!(out[0].shape, expect, "{shape:?}[{w:?}] ({interp:?})");
                }
                let _ = write(&shape, &w, interp);
            }
        }
    }

    /// An integer index into a zero-size dim of a value (`x[...][3:3][0]`) used to panic
    /// (`index_value` sliced past the empty data); jnp raises `IndexError` when tracing.
    #[test]
    fn integer_index_into_an_empty_value_dim_raises_index_error_at_trace() {
        // (input shape, the chain of value indices after `x0[...]`, output shape)
        type Case = (&'static [i64], Vec<Vec<I>>, &'static [i64]);
        let cases: Vec<Case> = vec![
            (&[0, 4], vec![vec![I::Int(0)]], &[4]),
            (
                &[6, 8],
                vec![
                    vec![I::Slice {
                        start: Some(3),
                        stop: Some(3),
                    }],
                    vec![I::Int(0)],
                ],
                &[8],
            ),
            (
                &[2, 0, 3],
                vec![vec![I::Full, I::Expr(E::ProgramId(0)), I::Int(1)]],
                &[2],
            ),
        ];
        for (x, chain, o) in cases {
            let mut value = E::name("x0").index(vec![I::Ellipsis]);
            for idx in chain {
                value = value.index(idx);
            }
            let body = vec![S::Store {
                target: E::name("o0"),
                index: vec![I::Ellipsis],
                value,
            }];
            let m = module(x, o, body);
            let e = Program::new(&m).unwrap_err();
            assert_eq!(e.stage, crate::SimStage::Trace, "{x:?}: {e}");
            assert_eq!(e.kind, ErrorKind::IndexError, "{x:?}: {e}");
            assert!(e.message.ends_with("with size 0"), "{x:?}: {e}");
            for interp in BOTH {
                assert_eq!(sim(&m, x, interp).unwrap_err().kind, ErrorKind::IndexError);
            }
        }
    }
}
