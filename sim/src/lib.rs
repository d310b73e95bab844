//! `pallas-sim`: an in-process executor of the Pallas AST ([`lang::pallas`]) with the
//! semantics of JAX's TPU interpreter
//! (`pltpu.InterpretParams(out_of_bounds_reads="raise", uninitialized_memory="nan")`, jax
//! 0.10.2 on XLA:CPU), or optionally of the generic interpreter (`interpret=True`).
//!
//! This module owns the executor: name resolution (`resolve`), values (`value`), array
//! operations (`ops`), the summation order (`reduce`), the interpreter (`exec`) and the
//! launcher ([`Program::run`]). It interprets a [`PallasModule`] node by node; nothing is
//! parsed. [`Program::new`] resolves names to slots and traces the kernel once (static errors);
//! [`Program::run`] executes it on concrete inputs, as many times as wanted.
//!
//! # Semantics (what was measured, and what the executor does)
//! * **Launcher** (`make()`): inputs are padded as the launcher says (`jnp.pad` with zeros, or
//!   NaN / `INT_MAX` with [`PaddingFill::Poison`](lang::pallas::PaddingFill)); `jnp.zeros`
//!   operands are zeros. Every operand, output and scratch is one whole-array VMEM buffer that
//!   persists across grid steps; the grid runs in row-major order (last axis fastest); outputs
//!   are sliced back to their true shapes.
//! * **Manual DMA** (`pltpu.make_async_copy(src, dst, sem).start()` / `.wait()`, `@pl.when`;
//!   measured with hand-built probes, `sim/tests/sim_vs_jax.rs`): an HBM operand
//!   (`memory_space=pl.ANY`) is a buffer like any other; DMA semaphores are scratch that is
//!   never read as data. The TPU interpreter performs a copy at its `.wait()`: the destination
//!   read between start and wait (or after a start never waited for) still holds its old
//!   contents, and a source window past the array raises `IndexError` at the wait (stage
//!   `run`). The generic interpreter copies at the `.start()`, clamping the source like any of
//!   its dynamic slices. A `.wait()` with no copy issued on its semaphore hangs the TPU
//!   interpreter (measured); the executor stops with [`ErrorKind::StepLimit`], its timeout.
//!   `pl.when(pred)` runs its body when `pred` holds; tracing visits the body once. The
//!   generic interpreter cannot lower `pl.program_id` inside a `cond` or `pl.when` body
//!   (measured: `NotImplementedError` at trace); emitted modules never do that, and the
//!   executor does not model the refusal.
//! * **Uninitialized memory**: scratch and outputs start as poison (NaN; int32 `INT_MAX`).
//!   The TPU interpreter does *not* copy an aliased input into the output's kernel buffer
//!   (`input_output_aliases` only shares the HBM buffer; the VMEM output block starts
//!   uninitialized and is copied back whole), so with [`Interpreter::Tpu`] an output row the
//!   kernel never writes comes back NaN even when its operand was `jnp.zeros` (measured);
//!   with a grid of no steps no block is copied back, and an aliased output is its operand.
//!   With [`Interpreter::Generic`] an aliased output starts as its operand, and poison is NaN /
//!   `INT_MIN` (`pallas.primitives.uninitialized_value`).
//! * **Refs**: a view is a window of a buffer (a start per buffer dim; visible dims) or of a
//!   Ref reshape (row-major reinterpretation of the inner view, what Mosaic and the generic
//!   interpreter do; JAX 0.10.2's TPU interpreter cannot read through one, a known issue).
//!   `x.at[...]` composes windows without copying and without checking. A read or write checks
//!   the *composed* range against the buffer (not against the view it was taken from, exactly
//!   like the TPU interpreter), at stage `run`: a read out of range is `IndexError`; a write
//!   (a `swap`) entirely out of range is `ValueError`, partially out of range the
//!   interpreter's own `AssertionError` (measured). The generic interpreter applies each level
//!   of transforms on its own, as its state discharge does: a level of static slices is a
//!   `lax.slice` (out of range: `TypeError` at trace), any other level a `dynamic_slice`
//!   that clamps into that level's input (XLA's merging of two nested dynamic slices is not
//!   modelled).
//! * **Static indices** (stage `trace`): `pl.ds(start, size)` with a Python-int start is checked
//!   against the dim of the view it indexes when the index is built, as JAX's `NDIndexer`
//!   does — including its quirk that a start of `0` is never checked. Python ints as Ref
//!   indices (`x[5]`) and anything computed with `jnp`/`pl` (`jnp.clip(5, 0, 9)`,
//!   `pl.multiple_of(5, 1)`, `jnp.minimum`) are traced, hence checked only when running.
//!   Tracing visits both branches of `lax.cond` and each loop body once, so a static error
//!   in an untaken branch or a zero-trip loop is still raised (measured).
//! * **Values**: JAX promotion with weak types (`bool < int* < int32 < float* < bfloat16 <
//!   float32`); Python scalars keep Python semantics among themselves (`//`, `%` floor) and
//!   enter JAX as weak types. Each operation rounds to its result dtype (bf16
//!   round-to-nearest-even via [`DType::round`](lang::tensor::DType::round); XLA:CPU
//!   computes bf16 in f32 and rounds after every op, measured equal to exact bf16
//!   arithmetic). int32 wraps. Float→int `astype` saturates, NaN → 0 (XLA:CPU). `minimum`,
//!   `maximum`, `clip` propagate NaN. Basic indexing of a value clamps out-of-range integers
//!   (jnp); an integer into a dim of size 0 is an `IndexError` at trace (jnp's gather).
//!   `jnp.floor_divide`/`jnp.remainder` follow JAX's `lax.div`/`lax.rem` formulas.
//! * **XLA's algebraic simplifier** (measured on XLA:CPU, bit for bit): float32 additions of
//!   compile-time constants are reassociated (`(X + C1) + C2 → X + (C1 + C2)`, `A - C →
//!   A + (-C)`, `A * 1 → A`), and a float division by a constant multiplies by the float32
//!   reciprocal (`A / C → A * (1 / C)`). A constant is a value built from literals only (a
//!   Python scalar, `jnp.full` of one, arithmetic on those); loop carries and branch operands
//!   are never constants. XLA also contracts `a * b + c` into an FMA within a fusion; the
//!   executor does not (the generated kernels only multiply by 0.5, 0/1 masks and 1, where
//!   it makes no difference).
//! * **Summation order** (`reduce`): XLA:CPU's, reconstructed by probing: in order for one
//!   reduced dim ≤ 32, windows of 32 for longer dims (several reduced dims: a `reduce-window`
//!   whose windows XLA vectorizes by rows when they are a power of two), YNNPACK's blocked
//!   order for inputs of ≥ 4096 elements, XLA's merge of directly nested float32 sums
//!   (through an identity reshape) into one multi-dim reduce.
//!
//! # Errors
//! A [`SimError`] has a stage ([`SimStage`]) and a Python exception class ([`ErrorKind`]);
//! [`ErrorKind::Unsupported`] marks a construct the executor does not model (a gap, never a
//! verdict about the module).

mod error;
mod exec;
mod ops;
mod reduce;
mod resolve;
mod value;

pub use error::{ErrorKind, SimError, SimStage};

use exec::{Buffer, Machine};
use lang::pallas::{Launcher, MemorySpace, OperandSource, PaddingFill, PallasModule};
use lang::tensor::Tensor;
use reduce::next_index;
use resolve::Resolved;
use std::borrow::Cow;
use std::rc::Rc;
use value::{Cat, MAX_RANK, Shape, Value, View};

/// Which JAX interpreter's semantics to follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Interpreter {
    /// The TPU interpreter (`pallas-tpu-interpret`): dynamic out-of-range accesses raise,
    /// outputs start uninitialized (NaN / `INT_MAX`) even when aliased.
    #[default]
    Tpu,
    /// The generic interpreter (`pallas-interpret`, `interpret=True`): dynamic out-of-range
    /// accesses clamp, aliased outputs start as their operand, int32 poison is `INT_MIN`.
    Generic,
}

/// Options of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// The interpreter whose semantics to follow.
    pub interpreter: Interpreter,
    /// The most statements one run (or the trace) may execute before it stops with
    /// [`ErrorKind::StepLimit`] (a generated case runs a few hundred).
    pub max_steps: u64,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            interpreter: Interpreter::Tpu,
            max_steps: 10_000_000,
        }
    }
}

/// A module resolved and traced, ready to run on inputs.
#[derive(Debug)]
pub struct Program<'m> {
    /// The module's launcher (borrowed: cloning it was a tenth of `Program::new`'s
    /// allocations).
    launcher: &'m Launcher,
    res: Resolved,
    /// What tracing raises with the generic interpreter's semantics only.
    generic_error: Option<SimError>,
}

fn shape_of(dims: &[i64]) -> Result<Shape, SimError> {
    Shape::from_i64(dims)
}

impl<'m> Program<'m> {
    /// Resolves the module's names and traces its kernel once: static errors (stage
    /// `trace`) are raised here, before any input is seen.
    pub fn new(module: &'m PallasModule) -> Result<Program<'m>, SimError> {
        let mut p = Program {
            launcher: &module.launcher,
            res: resolve::resolve(module),
            generic_error: None,
        };
        p.check_launcher()?;
        let bufs = p.buffers(None, Interpreter::Tpu)?;
        let mut m = Machine::new(&p.res, bufs, true, false);
        m.grid_rank = p.launcher.grid.len();
        m.steps_left = SimOptions::default().max_steps;
        let args = p.kernel_args(&m.bufs);
        m.call(0, args)?;
        let generic_error = m.generic_error.take();
        p.generic_error = generic_error;
        Ok(p)
    }

    fn check_launcher(&self) -> Result<(), SimError> {
        let l = self.launcher;
        let import = |msg: String| SimError::new(SimStage::Import, ErrorKind::ValueError, msg);
        if l.grid.len() > MAX_RANK {
            return Err(SimError::unsupported(format!(
                "a grid of rank {}",
                l.grid.len()
            )));
        }
        for (i, o) in l.operands.iter().enumerate() {
            if o.pad_after.len() != o.shape.len() {
                return Err(import(format!("operand {i}: padding rank != shape rank")));
            }
            if let OperandSource::Param(k) | OperandSource::HbmParam(k) = o.source
                && k >= l.params.len()
            {
                return Err(import(format!("operand {i} reads missing parameter {k}")));
            }
            if o.block.len() != o.shape.len() {
                return Err(import(format!("operand {i}: block rank != shape rank")));
            }
            let blocked_param = matches!(o.source, OperandSource::Param(_));
            if o.is_blocked() && !blocked_param {
                return Err(SimError::unsupported(format!(
                    "operand {i}: a BlockSpec block of an operand that is not a VMEM parameter"
                )));
            }
            if o.is_blocked() && l.outputs.iter().any(|out| out.aliases == Some(i)) {
                return Err(SimError::unsupported(format!(
                    "operand {i}: a BlockSpec block of an aliased operand"
                )));
            }
        }
        for (i, o) in l.outputs.iter().enumerate() {
            if o.pad_after.len() != o.shape.len() {
                return Err(import(format!("output {i}: padding rank != shape rank")));
            }
            if let Some(a) = o.aliases {
                let Some(op) = l.operands.get(a) else {
                    return Err(import(format!("output {i} aliases missing operand {a}")));
                };
                if op.padded_shape() != o.padded_shape() || op.dtype != o.dtype {
                    return Err(import(format!(
                        "output {i} aliases operand {a} of another shape or dtype"
                    )));
                }
            }
        }
        if let Some(&k) = l.returns.iter().find(|&&k| k >= l.outputs.len()) {
            return Err(import(format!("the launcher returns missing output {k}")));
        }
        Ok(())
    }

    /// The kernel buffers: operands, outputs, scratch (values only when `inputs` is given).
    fn buffers<'i>(
        &self,
        inputs: Option<&'i [Tensor]>,
        interp: Interpreter,
    ) -> Result<Vec<Buffer<'i>>, SimError> {
        let l = self.launcher;
        let int_max = interp == Interpreter::Tpu;
        // A grid dimension of 0 (or less: `range` of it is empty) runs no step.
        let no_steps = l.grid.iter().any(|&g| g <= 0);
        let mut bufs = Vec::with_capacity(l.operands.len() + l.outputs.len() + l.scratch.len());
        for (i, o) in l.operands.iter().enumerate() {
            let cat = Cat::of(o.dtype);
            let shape = shape_of(&o.padded_shape())?;
            if o.is_blocked() {
                // The kernel sees the block; `Program::run` fills it at every grid step.
                bufs.push(Buffer {
                    cat,
                    shape: shape_of(&o.block_shape())?,
                    data: Cow::Borrowed(&[]),
                    sem: false,
                });
                continue;
            }
            let data = match (inputs, &o.source) {
                (None, _) => Cow::Borrowed(&[][..]),
                (Some(_), OperandSource::Zeros) => zeros(shape.numel()),
                (Some(inputs), OperandSource::Param(k) | OperandSource::HbmParam(k)) => {
                    let t = &inputs[*k];
                    let true_shape: Vec<usize> = o.shape.iter().map(|&d| d as usize).collect();
                    if t.shape != true_shape || t.dtype != o.dtype {
                        return Err(SimError::trace(
                            ErrorKind::ValueError,
                            format!(
                                "operand {i}: input {k} is {} {:?}, the module was emitted for {} {:?}",
                                t.dtype, t.shape, o.dtype, true_shape
                            ),
                        ));
                    }
                    let fill = match l.padding {
                        PaddingFill::Zero => 0.0,
                        PaddingFill::Poison => cat.poison(true),
                    };
                    padded(&t.values, shape_of(&o.shape)?, shape, fill)
                }
            };
            bufs.push(Buffer {
                cat,
                shape,
                data,
                sem: false,
            });
        }
        for o in &l.outputs {
            let cat = Cat::of(o.dtype);
            let shape = shape_of(&o.padded_shape())?;
            let data = match (inputs, o.aliases, interp) {
                (None, _, _) => Cow::Borrowed(&[][..]),
                (Some(_), Some(a), Interpreter::Generic) => bufs[a].data.clone(),
                // No step copies an output block back: the aliased HBM buffer is the operand.
                (Some(_), Some(a), Interpreter::Tpu) if no_steps => bufs[a].data.clone(),
                (Some(_), _, _) => Cow::Owned(vec![cat.poison(int_max); shape.numel()]),
            };
            bufs.push(Buffer {
                cat,
                shape,
                data,
                sem: false,
            });
        }
        for s in &l.scratch {
            let cat = Cat::of(s.dtype);
            let shape = shape_of(&s.shape)?;
            // A semaphore's data is never read: DMA completions are queued in the machine.
            let sem = match s.space {
                MemorySpace::Vmem | MemorySpace::Smem => false,
                MemorySpace::DmaSemaphore => true,
            };
            let data = match inputs {
                None => Cow::Borrowed(&[][..]),
                Some(_) if sem => zeros(shape.numel()),
                Some(_) => Cow::Owned(vec![cat.poison(int_max); shape.numel()]),
            };
            bufs.push(Buffer {
                cat,
                shape,
                data,
                sem,
            });
        }
        Ok(bufs)
    }

    /// The whole (padded) arrays of the blocked operands, by operand index.
    fn blocked_operands<'i>(
        &self,
        inputs: &'i [Tensor],
        interp: Interpreter,
    ) -> Result<Vec<(usize, Whole<'i>)>, SimError> {
        let l = self.launcher;
        let mut out = Vec::new();
        for (i, o) in l.operands.iter().enumerate() {
            let OperandSource::Param(k) = o.source else {
                continue;
            };
            if !o.is_blocked() {
                continue;
            }
            let cat = Cat::of(o.dtype);
            let fill = match l.padding {
                PaddingFill::Zero => 0.0,
                PaddingFill::Poison => cat.poison(true),
            };
            let t = &inputs[k];
            let shape = shape_of(&o.padded_shape())?;
            out.push((
                i,
                Whole {
                    shape,
                    data: padded(&t.values, shape_of(&o.shape)?, shape, fill),
                    outside: block_padding(cat, interp),
                },
            ));
        }
        Ok(out)
    }

    fn kernel_args(&self, bufs: &[Buffer]) -> Vec<Value> {
        bufs.iter()
            .enumerate()
            .map(|(i, b)| Value::Ref(Rc::new(View::whole(i, b.cat, b.shape))))
            .collect()
    }

    /// Runs the module on `inputs` (the launcher's parameters, in order): the returned
    /// outputs, sliced to their true shapes, or what the module raised.
    pub fn run(&self, inputs: &[Tensor], options: &SimOptions) -> Result<Vec<Tensor>, SimError> {
        let l = self.launcher;
        if inputs.len() != l.params.len() {
            return Err(SimError::trace(
                ErrorKind::TypeError,
                format!(
                    "f() takes {} positional arguments but {} were given",
                    l.params.len(),
                    inputs.len()
                ),
            ));
        }
        let interp = options.interpreter;
        if let (Interpreter::Generic, Some(e)) = (interp, &self.generic_error) {
            return Err(e.clone());
        }
        let bufs = self.buffers(Some(inputs), interp)?;
        let args = self.kernel_args(&bufs);
        let mut m = Machine::new(&self.res, bufs, false, interp == Interpreter::Generic);
        m.grid_rank = l.grid.len();
        m.steps_left = options.max_steps;
        let grid = &l.grid;
        let blocked = self.blocked_operands(inputs, interp)?;
        if grid.iter().all(|&g| g > 0) {
            let mut idx = [0i64; MAX_RANK];
            loop {
                m.pid = idx;
                for (i, whole) in &blocked {
                    m.bufs[*i].data = Cow::Owned(whole.block(&l.operands[*i], &idx[..grid.len()]));
                }
                m.call(0, args.iter().cloned())?;
                if !exec::next_grid_index(&mut idx[..grid.len()], grid) {
                    break;
                }
            }
        }
        let n_ops = l.operands.len();
        let mut out = Vec::with_capacity(l.returns.len());
        for (j, &k) in l.returns.iter().enumerate() {
            let o = &l.outputs[k];
            let b = &mut m.bufs[n_ops + k];
            let shape: Vec<usize> = o.shape.iter().map(|&d| d as usize).collect();
            // The machine is done: an unpadded output returned once more is moved, not copied.
            let values = if b.shape.dims() == shape && !l.returns[j + 1..].contains(&k) {
                std::mem::take(&mut b.data).into_owned()
            } else {
                unpadded(&b.data, b.shape, &shape)
            };
            out.push(Tensor {
                dtype: o.dtype,
                shape,
                values,
            });
        }
        Ok(out)
    }
}

/// The whole array of a blocked operand (D-1.5.1-19), from which each grid step's block is cut.
struct Whole<'i> {
    shape: Shape,
    data: Cow<'i, [f64]>,
    /// What a block holds past the array's end (a partial last block).
    outside: f64,
}

impl Whole<'_> {
    /// The block of operand `o` at grid point `pid`, row-major; elements past the array are
    /// `outside`. Cut a row (last dim) at a time: the part of a row inside the array is one
    /// slice (element by element, cutting blocks was 7.8M instructions of a 2,000-case
    /// campaign).
    fn block(&self, o: &lang::pallas::Operand, pid: &[i64]) -> Vec<f64> {
        let start = o.block_start(pid);
        let bshape = o.block_shape();
        let r = bshape.len();
        let n: i64 = bshape.iter().product();
        let mut out = Vec::with_capacity(n.max(0) as usize);
        if n <= 0 {
            return out;
        }
        if r == 0 {
            out.push(self.data[0]);
            return out;
        }
        let dims = self.shape.dims();
        let st = self.shape.strides();
        let last = r - 1;
        let row = bshape[last];
        // The row's elements inside the array's last dim: `lo..hi` of `0..row`.
        let lo = (-start[last]).clamp(0, row);
        let hi = (dims[last] as i64 - start[last]).clamp(lo, row);
        let mut idx = vec![0i64; last];
        for _ in 0..n / row {
            let mut off = 0usize;
            let mut inside = true;
            for d in 0..last {
                let at = start[d] + idx[d];
                if at < 0 || at as usize >= dims[d] {
                    inside = false;
                    break;
                }
                off += at as usize * st[d];
            }
            if inside {
                let at = |j: i64| off + (start[last] + j) as usize;
                out.resize(out.len() + lo as usize, self.outside);
                if hi > lo {
                    out.extend_from_slice(&self.data[at(lo)..at(hi)]);
                }
                out.resize(out.len() + (row - hi) as usize, self.outside);
            } else {
                out.resize(out.len() + row as usize, self.outside);
            }
            exec::next_grid_index(&mut idx, &bshape[..last]);
        }
        out
    }
}

/// What a partial last block holds past the array's end (measured with jax 0.10.2,
/// `sim_vs_jax::partial_blocks_match_jax`).
fn block_padding(cat: Cat, interp: Interpreter) -> f64 {
    cat.poison(interp == Interpreter::Tpu)
}

/// Runs `module` on `inputs`: [`Program::new`] then [`Program::run`].
pub fn simulate(
    module: &PallasModule,
    inputs: &[Tensor],
    options: &SimOptions,
) -> Result<Vec<Tensor>, SimError> {
    Program::new(module)?.run(inputs, options)
}

/// How many zeros [`zeros`] lends (512 KiB of `.bss`: pages never touched cost nothing).
const ZEROS_LEN: usize = 1 << 16;

static ZEROS: [f64; ZEROS_LEN] = [0.0; ZEROS_LEN];

/// `n` zeros for a `jnp.zeros` operand or a semaphore array, borrowed from [`ZEROS`] when it
/// is long enough: most such buffers are only read (a semaphore's never), and zeroing a fresh
/// allocation for each was 5.1M instructions of a 2,000-case campaign. A write copies them.
fn zeros<'i>(n: usize) -> Cow<'i, [f64]> {
    match ZEROS.get(..n) {
        Some(z) => Cow::Borrowed(z),
        None => Cow::Owned(vec![0.0; n]),
    }
}

/// `values` (row-major, `shape`) placed at the start of a `padded`-shaped buffer of `fill`
/// (`values` themselves when there is no padding).
fn padded(values: &[f64], shape: Shape, padded: Shape, fill: f64) -> Cow<'_, [f64]> {
    if shape == padded {
        return Cow::Borrowed(values);
    }
    let fits = shape.rank() == padded.rank()
        && shape.rank() > 0
        && shape.dims().iter().zip(padded.dims()).all(|(s, p)| s <= p);
    if fits {
        return Cow::Owned(padded_rows(values, shape, padded, fill));
    }
    let mut out = vec![fill; padded.numel()];
    let r = shape.rank();
    if shape.numel() == 0 {
        return Cow::Owned(out);
    }
    let pst = padded.strides();
    let row = shape.dims()[r - 1];
    let rows = shape.numel() / row.max(1);
    let mut idx = [0usize; MAX_RANK];
    for k in 0..rows {
        let off: usize = (0..r - 1).map(|d| idx[d] * pst[d]).sum();
        out[off..off + row].copy_from_slice(&values[k * row..(k + 1) * row]);
        next_index(&mut idx[..r - 1], &shape.dims()[..r - 1]);
    }
    Cow::Owned(out)
}

/// [`padded`] when every dim fits its padded dim, written once in order, a padded row
/// (last dim) at a time: filling the whole buffer first and then copying the values over it
/// was most of `padded`'s 6M instructions (a 2,000-case campaign).
fn padded_rows(values: &[f64], shape: Shape, padded: Shape, fill: f64) -> Vec<f64> {
    let (dims, pdims) = (shape.dims(), padded.dims());
    let last = dims.len() - 1;
    let (row, prow) = (dims[last], pdims[last]);
    let mut out = Vec::with_capacity(padded.numel());
    if prow == 0 {
        return out;
    }
    let mut idx = [0usize; MAX_RANK];
    let mut k = 0;
    for _ in 0..padded.numel() / prow {
        if (0..last).all(|d| idx[d] < dims[d]) {
            // The next row of `values` (rows come in row-major order on both sides).
            out.extend_from_slice(&values[k * row..(k + 1) * row]);
            out.resize(out.len() + prow - row, fill);
            k += 1;
        } else {
            out.resize(out.len() + prow, fill);
        }
        next_index(&mut idx[..last], &pdims[..last]);
    }
    out
}

/// The `shape`-shaped leading corner of a row-major `padded` buffer.
fn unpadded(data: &[f64], padded: Shape, shape: &[usize]) -> Vec<f64> {
    if padded.dims() == shape {
        return data.to_vec();
    }
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let r = shape.len();
    let pst = padded.strides();
    let row = shape[r - 1];
    let mut idx = [0usize; MAX_RANK];
    for _ in 0..n / row {
        let off: usize = (0..r - 1).map(|d| idx[d] * pst[d]).sum();
        out.extend_from_slice(&data[off..off + row]);
        next_index(&mut idx[..r - 1], &shape[..r - 1]);
    }
    out
}
