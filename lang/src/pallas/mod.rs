//! The typed Pallas AST: the one representation of an emitted module, and its one printer to
//! Python ([`print_module`]).
//!
//! This module owns every node kind the codegen can emit. Lowering (`compiler::lower`) builds
//! these nodes; nothing else in the compiler writes Python text. The set of node kinds is
//! closed on purpose: there is no raw-code escape hatch, so an in-process executor with the TPU
//! interpreter's semantics (`pallas-sim`) can interpret a [`PallasModule`] directly, node by
//! node, instead of parsing Python.
//!
//! A module has two parts:
//! * the kernel body [`Function`]: statements ([`Stmt`]) over expressions ([`Expr`]): names,
//!   literals, arithmetic, `pl.ds`, `pl.multiple_of`, `pl.program_id`, Ref transforms
//!   (`x.at[...]`, `x.reshape((...))`), Ref reads and writes, the `jnp.*` calls of [`Jnp`],
//!   `.astype`, `jax.lax.fori_loop`, `jax.lax.cond` and `pltpu.emit_pipeline`, and the manual
//!   DMA of a staged load: `pltpu.make_async_copy(src, dst, sem).start()` /
//!   `.wait()` ([`Stmt::AsyncCopy`]) under `@pl.when(pred)` ([`Stmt::When`]);
//! * the [`Launcher`]: a structured description of the host side (`make(interpret)`): which
//!   arrays are padded how, the `pl.pallas_call` grid, outputs, aliases and scratch, and how
//!   outputs are sliced back. The printer expands it into Python; an executor reads the fields.

mod print;

pub use print::print_module;

use crate::tensor::DType;

/// One emitted Python module: the kernel body function and its launcher.
#[derive(Clone, Debug, PartialEq)]
pub struct PallasModule {
    /// Lines of the module docstring (plain text, no code).
    pub doc: Vec<String>,
    /// The kernel body (`def _helion_<name>(refs...)`), passed to `pl.pallas_call`.
    pub kernel: Function,
    /// The host side: padding, `pl.pallas_call` and output slicing.
    pub launcher: Launcher,
}

impl std::fmt::Display for PallasModule {
    /// The module as Python source ([`print_module`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print_module(self))
    }
}

/// A Python function definition (the kernel, a loop body or a branch closure).
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Function name.
    pub name: String,
    /// Positional parameter names.
    pub params: Vec<String>,
    /// Body statements (an empty body prints as `pass`).
    pub body: Vec<Stmt>,
}

/// A statement of the kernel body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `target = value`.
    Assign {
        /// The bound name(s).
        target: Target,
        /// The value.
        value: Expr,
    },
    /// A Ref write `target[index] = value` (`index` may be `[...]`).
    Store {
        /// The written Ref (a name or a Ref transform).
        target: Expr,
        /// Index parts.
        index: Vec<IndexPart>,
        /// The written value.
        value: Expr,
    },
    /// `for var in range(start, stop[, step]):` with static Python ints (the `unroll` loop).
    For {
        /// The loop variable.
        var: String,
        /// First value.
        start: Expr,
        /// Exclusive bound.
        stop: Expr,
        /// Step; `None` prints no step (step 1).
        step: Option<Expr>,
        /// The body.
        body: Vec<Stmt>,
    },
    /// A nested function definition (loop bodies, branch closures).
    Def(Function),
    /// `return`, `return v` (a tuple value returns a tuple).
    Return(Option<Expr>),
    /// An expression evaluated for its effect (`pltpu.emit_pipeline(...)()`, a `cond`
    /// with no results).
    Expr(Expr),
    /// `@pl.when(pred)` on a nested `def <body.name>():`: runs the body once if `pred` holds
    /// (Python binds the name to `None`). The body takes no parameters.
    When {
        /// The condition (a scalar).
        pred: Expr,
        /// The guarded function.
        body: Function,
    },
    /// `pltpu.make_async_copy(src, dst, sem).<op>()`: one side of a manual DMA between Refs
    /// (spec §1.4, DMA-staged loads under `fori_loop`, D-1.5.1-11).
    AsyncCopy {
        /// The source Ref (here an HBM window `x.at[pl.ds(...), ...]`).
        src: Expr,
        /// The destination Ref (a VMEM slot `x_buf.at[k]`, or the one-slot `x_buf`).
        dst: Expr,
        /// The DMA semaphore (`x_sem.at[k]`, or the scalar `x_sem`).
        sem: Expr,
        /// Which side.
        op: CopyOp,
    },
}

/// The two sides of an async copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyOp {
    /// `.start()`: issue the copy; it signals `sem` when done.
    Start,
    /// `.wait()`: block until `sem` says a copy of `dst`'s size is done.
    Wait,
}

/// The left-hand side of an assignment.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// `name = ...`.
    Name(String),
    /// `(a, b) = ...` (one element prints `(a,) = ...`).
    Tuple(Vec<String>),
}

/// One entry of an index list (Ref indexing, `.at[...]`, value basic indexing).
#[derive(Clone, Debug, PartialEq)]
pub enum IndexPart {
    /// `:`.
    Full,
    /// `None` (value indexing only).
    NewAxis,
    /// `...`: the whole Ref (`x[...]`).
    Ellipsis,
    /// A static int: selects and drops the dim.
    Int(i64),
    /// A static slice `start:stop` (value indexing; either bound may be absent).
    Slice {
        /// Start bound.
        start: Option<i64>,
        /// Stop bound.
        stop: Option<i64>,
    },
    /// A dynamic entry: `pl.ds(...)` or a scalar expression (drops the dim).
    Expr(Expr),
}

/// Arithmetic and bitwise operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/` (true division).
    Div,
    /// `//` (floor division).
    FloorDiv,
    /// `%`.
    Mod,
    /// `&`.
    BitAnd,
    /// `|`.
    BitOr,
    /// `^`.
    BitXor,
}

/// Comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
}

/// An expression of the kernel body.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A Python name.
    Name(String),
    /// An int literal.
    Int(i64),
    /// A float literal (NaN and infinities print as `jnp.nan`, `jnp.inf`).
    Float(f64),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// A tuple `(a, b)` (one element prints `(a,)`).
    Tuple(Vec<Expr>),
    /// `lhs <op> rhs`.
    Binary {
        /// Operator.
        op: BinOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `lhs <cmp> rhs`.
    Compare {
        /// Comparison.
        op: CmpOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `-value`.
    Neg(Box<Expr>),
    /// `base[index]`: a Ref read, or basic indexing of a value.
    Index {
        /// The indexed Ref or value.
        base: Box<Expr>,
        /// Index parts.
        index: Vec<IndexPart>,
    },
    /// `base.at[index]`: a Ref transform (no read).
    At {
        /// The Ref.
        base: Box<Expr>,
        /// Index parts.
        index: Vec<IndexPart>,
    },
    /// `base.reshape((d0, d1, ...))`: a Ref reshape transform (no read).
    RefReshape {
        /// The Ref.
        base: Box<Expr>,
        /// The new shape.
        shape: Vec<i64>,
    },
    /// `value.astype(jnp.<dtype>)`.
    Astype {
        /// The converted value.
        value: Box<Expr>,
        /// Target type.
        dtype: DType,
    },
    /// `pl.ds(start, size)`.
    Ds {
        /// First index.
        start: Box<Expr>,
        /// Length.
        size: Box<Expr>,
    },
    /// `pl.multiple_of(value, multiple)`: an alignment hint (identity on values).
    MultipleOf {
        /// The hinted value.
        value: Box<Expr>,
        /// The multiple it is claimed to be.
        multiple: Box<Expr>,
    },
    /// `pl.program_id(axis)`.
    ProgramId(usize),
    /// A `jnp.*` call.
    Jnp(Jnp),
    /// `jax.lax.fori_loop(lower, upper, body, init)`.
    ForiLoop {
        /// First index.
        lower: Box<Expr>,
        /// Exclusive bound.
        upper: Box<Expr>,
        /// Name of the body function `(index, carry) -> carry`.
        body: String,
        /// The initial carry.
        init: Box<Expr>,
    },
    /// `jax.lax.cond(pred, then_fn, else_fn, *operands)`.
    Cond {
        /// The predicate.
        pred: Box<Expr>,
        /// Name of the then-branch function.
        then_fn: String,
        /// Name of the else-branch function.
        else_fn: String,
        /// Operands passed to both branches.
        operands: Vec<Expr>,
    },
    /// `pltpu.emit_pipeline(body, grid=(g0, ...), _explicit_indices=True)()`: runs `body`
    /// once per grid point with the grid indices; no in/out specs (every operand is already
    /// VMEM-resident; loop-carried values live in scratch Refs).
    EmitPipeline {
        /// Name of the body function `(indices) -> None`.
        body: String,
        /// The grid.
        grid: Vec<Expr>,
    },
}

/// The `jnp.*` calls the codegen emits.
#[derive(Clone, Debug, PartialEq)]
pub enum Jnp {
    /// `jnp.clip(x, lo, hi)`.
    Clip {
        /// Clipped value.
        x: Box<Expr>,
        /// Lower bound.
        lo: Box<Expr>,
        /// Upper bound.
        hi: Box<Expr>,
    },
    /// `jnp.minimum(a, b)`.
    Minimum(Box<Expr>, Box<Expr>),
    /// `jnp.maximum(a, b)`.
    Maximum(Box<Expr>, Box<Expr>),
    /// `jnp.arange(start, stop, dtype=jnp.<dtype>)`.
    Arange {
        /// First value.
        start: Box<Expr>,
        /// Exclusive bound.
        stop: Box<Expr>,
        /// Element type.
        dtype: DType,
    },
    /// `jnp.zeros((d0, ...), jnp.<dtype>)`.
    Zeros {
        /// Shape.
        shape: Vec<Expr>,
        /// Element type.
        dtype: DType,
    },
    /// `jnp.full((d0, ...), value, jnp.<dtype>)`.
    Full {
        /// Shape.
        shape: Vec<Expr>,
        /// Fill value.
        value: Box<Expr>,
        /// Element type.
        dtype: DType,
    },
    /// `jnp.sum(x, axis=k)`.
    Sum {
        /// Reduced value.
        x: Box<Expr>,
        /// Reduced axis (non-negative).
        axis: usize,
    },
    /// `jnp.reshape(x, (d0, ...))` (a value reshape).
    Reshape {
        /// Reshaped value.
        x: Box<Expr>,
        /// New shape.
        shape: Vec<i64>,
    },
    /// `jnp.transpose(x, (p0, ...))`.
    Transpose {
        /// Permuted value.
        x: Box<Expr>,
        /// The permutation.
        axes: Vec<usize>,
    },
    /// `jnp.broadcast_to(x, (d0, ...))`.
    BroadcastTo {
        /// Broadcast value.
        x: Box<Expr>,
        /// Target shape.
        shape: Vec<i64>,
    },
    /// `jax.lax.dynamic_slice_in_dim(x, start, size, axis=k)`: `size` elements of axis `k`
    /// from `start`, clamped so the slice stays inside `x` (the codegen's plain path for a
    /// run read out of a whole materialized Ref, `compiler::decisions::PlainSet`).
    DynamicSliceInDim {
        /// Sliced value.
        x: Box<Expr>,
        /// First index (an int scalar, possibly traced).
        start: Box<Expr>,
        /// Length.
        size: i64,
        /// Sliced axis.
        axis: usize,
    },
    /// `jnp.where(cond, a, b)`.
    Where {
        /// Selector.
        cond: Box<Expr>,
        /// Value where true.
        a: Box<Expr>,
        /// Value where false.
        b: Box<Expr>,
    },
    /// `jax.lax.dot_general(lhs, rhs, dimension_numbers=(((cl,), (cr,)), batch),
    /// precision=..., preferred_element_type=...)` with one contracted dim per side, as
    /// Helion's Pallas backend emits a matrix product (`_emit_pallas_matmul`: the last dim of
    /// `lhs` with the second-to-last of `rhs`, a leading batch dim shared by 3-D operands)
    /// and a one-hot gather (`emit_gather`: the one-hot's last dim with the table's gathered
    /// dim). The result's dims are the batch dim, `lhs`'s free dims, then `rhs`'s.
    DotGeneral {
        /// Left factor.
        lhs: Box<Expr>,
        /// Right factor.
        rhs: Box<Expr>,
        /// The contracted dim of `lhs` and of `rhs`.
        contract: (usize, usize),
        /// Dim 0 of both operands is a shared batch dim (`((0,), (0,))`).
        batched: bool,
        /// `preferred_element_type=jnp.float32`: Helion asks for it when a factor is narrower
        /// than 32 bits (`_needs_f32_accumulator`) and for every one-hot gather.
        preferred_f32: bool,
        /// `precision=jax.lax.Precision.HIGHEST` (a float32 one-hot gather, which the MXU
        /// would otherwise truncate to bfloat16) instead of `precision='default'`.
        highest: bool,
    },
    /// `jax.nn.one_hot(x, n, dtype=jnp.<dtype>)`: a trailing dim of `n`, 1 where it equals
    /// the int `x` and 0 elsewhere (an `x` outside `0..n`, a negative one included, gives a
    /// row of zeros).
    OneHot {
        /// The indices.
        x: Box<Expr>,
        /// The number of classes.
        n: i64,
        /// Element type.
        dtype: DType,
    },
}

/// The host side of a module: `make(interpret)` returns `f(*inputs)`, which pads the inputs,
/// makes the initial contents of outputs, calls `pl.pallas_call` and slices the outputs back
/// to their true shapes (spec §3.1).
#[derive(Clone, Debug, PartialEq)]
pub struct Launcher {
    /// The kernel function's name.
    pub kernel: String,
    /// Parameters of `f`: the kernel's tensor arguments, in order.
    pub params: Vec<String>,
    /// The launch grid (`pl.program_id(k)` ranges over `0..grid[k]`).
    pub grid: Vec<i64>,
    /// Operands of `pl.pallas_call`, in order (the kernel's first Ref parameters).
    pub operands: Vec<Operand>,
    /// Outputs of `pl.pallas_call`, in order (the kernel's next Ref parameters).
    pub outputs: Vec<Output>,
    /// Scratch Refs (the kernel's last Ref parameters).
    pub scratch: Vec<Scratch>,
    /// What `f` returns: indices into `outputs`, in the kernel's `return` order.
    pub returns: Vec<usize>,
    /// The value padding is filled with.
    pub padding: PaddingFill,
}

/// What padding holds (spec §3.1; measurements "Masking by multiplication does not hide
/// poison").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaddingFill {
    /// Zeros, as upstream's launcher pads on the host (`_ds_pad_dims`).
    Zero,
    /// Poison: NaN for floats, `INT_MAX` for int32.
    Poison,
}

/// One operand of `pl.pallas_call`: an input of `f` (padded) or a fresh initial buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    /// Where its value comes from.
    pub source: OperandSource,
    /// Element type.
    pub dtype: DType,
    /// Shape before padding.
    pub shape: Vec<i64>,
    /// Per dim: elements appended at the end (`jnp.pad` with `(0, n)`).
    pub pad_after: Vec<i64>,
    /// Per dim: how the kernel sees it, the `pl.BlockSpec` of the operand (spec §3.1,
    /// D-1.5.1-19). Every dim [`BlockDim::Whole`] is the whole-array VMEM block.
    pub block: Vec<BlockDim>,
}

/// One dim of an operand's `pl.BlockSpec` (spec §3.1, D-1.5.1-19).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockDim {
    /// The whole (padded) dim; block index 0.
    Whole,
    /// A grid-tiled dim: `max(min(size, dim), 1)` elements at block index
    /// `min(pl.program_id(axis), cdiv(dim, size) - 1)` (Helion's launcher); `axis` is `None`
    /// when the dim fits in one block (block index 0). A partial last block is padded by the
    /// interpreter, not by the launcher.
    Tiled {
        /// The block size.
        size: i64,
        /// The grid axis whose program id picks the block.
        axis: Option<usize>,
    },
}

impl Operand {
    /// The shape of the array: shape plus padding.
    pub fn padded_shape(&self) -> Vec<i64> {
        self.shape
            .iter()
            .zip(&self.pad_after)
            .map(|(s, p)| s + p)
            .collect()
    }

    /// Whether some dim is a grid-tiled block (not the whole array).
    pub fn is_blocked(&self) -> bool {
        self.block
            .iter()
            .any(|b| matches!(b, BlockDim::Tiled { .. }))
    }

    /// The shape of the block the kernel sees (the padded shape unless blocked).
    pub fn block_shape(&self) -> Vec<i64> {
        self.padded_shape()
            .iter()
            .zip(&self.block)
            .map(|(&dim, b)| b.extent(dim))
            .collect()
    }

    /// The first element of the block at grid point `pid`, per dim.
    pub fn block_start(&self, pid: &[i64]) -> Vec<i64> {
        self.padded_shape()
            .iter()
            .zip(&self.block)
            .map(|(&dim, b)| b.start(dim, pid))
            .collect()
    }
}

impl BlockDim {
    /// The block's extent on a dim of `dim` elements.
    pub fn extent(self, dim: i64) -> i64 {
        match self {
            BlockDim::Whole => dim,
            BlockDim::Tiled { size, .. } => size.min(dim).max(1),
        }
    }

    /// The index of the last block on a dim of `dim` elements.
    pub fn last_block(self, dim: i64) -> i64 {
        let e = self.extent(dim);
        (dim + e - 1).div_euclid(e).max(1) - 1
    }

    /// The block index at grid point `pid`.
    pub fn block_index(self, dim: i64, pid: &[i64]) -> i64 {
        match self {
            BlockDim::Whole | BlockDim::Tiled { axis: None, .. } => 0,
            BlockDim::Tiled { axis: Some(a), .. } => {
                pid.get(a).copied().unwrap_or(0).min(self.last_block(dim))
            }
        }
    }

    /// The first element of the block at grid point `pid`.
    pub fn start(self, dim: i64, pid: &[i64]) -> i64 {
        self.block_index(dim, pid) * self.extent(dim)
    }
}

/// Where an operand's value comes from (and so where the kernel sees it).
#[derive(Clone, Debug, PartialEq)]
pub enum OperandSource {
    /// Parameter `k` of `f`, a whole-array VMEM block.
    Param(usize),
    /// Parameter `k` of `f`, left in HBM (`pl.BlockSpec(memory_space=pl.ANY)`): the kernel
    /// only reads it by manual DMA (`pltpu.make_async_copy`), never directly.
    HbmParam(usize),
    /// `jnp.zeros(padded shape)`: the initial contents of a `torch.zeros` output.
    Zeros,
}

/// One output of `pl.pallas_call`.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// Element type.
    pub dtype: DType,
    /// The true shape (what `f` returns after slicing).
    pub shape: Vec<i64>,
    /// Per dim: padding at the end (the kernel sees `shape + pad_after`).
    pub pad_after: Vec<i64>,
    /// The operand whose buffer it aliases (`input_output_aliases`), if any: its initial
    /// contents.
    pub aliases: Option<usize>,
}

impl Output {
    /// The shape the kernel sees.
    pub fn padded_shape(&self) -> Vec<i64> {
        self.shape
            .iter()
            .zip(&self.pad_after)
            .map(|(s, p)| s + p)
            .collect()
    }
}

/// A scratch Ref of the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Scratch {
    /// Memory space.
    pub space: MemorySpace,
    /// Shape.
    pub shape: Vec<i64>,
    /// Element type.
    pub dtype: DType,
}

/// TPU memory spaces of scratch Refs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemorySpace {
    /// `pltpu.VMEM`: vector memory.
    Vmem,
    /// `pltpu.SMEM`: scalar memory.
    Smem,
    /// `pltpu.SemaphoreType.DMA(shape)`: DMA semaphores (the scratch's dtype is
    /// meaningless; lowering says `Int32`, a semaphore being a counter).
    DmaSemaphore,
}

impl Expr {
    /// A name.
    pub fn name(n: impl Into<String>) -> Expr {
        Expr::Name(n.into())
    }

    /// `lhs op rhs` for index arithmetic on ints: folds int literals and the identities
    /// `x + 0`, `x - 0`, `x * 1`, `x // 1` (the last is not an identity on floats, so lowering
    /// of user arithmetic builds [`Expr::Binary`] directly).
    pub fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
        match (op, &lhs, &rhs) {
            (_, Expr::Int(a), Expr::Int(b)) => {
                let (a, b) = (*a, *b);
                let folded = match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::FloorDiv => crate::ir::arith::floor_div(a, b),
                    BinOp::Mod => crate::ir::arith::floor_mod(a, b),
                    BinOp::Div | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => None,
                };
                if let Some(v) = folded {
                    return Expr::Int(v);
                }
            }
            (BinOp::Add, Expr::Int(0), _) => return rhs,
            (BinOp::Add | BinOp::Sub, _, Expr::Int(0)) => return lhs,
            (BinOp::Mul, Expr::Int(1), _) => return rhs,
            (BinOp::Mul | BinOp::FloorDiv, _, Expr::Int(1)) => return lhs,
            _ => {}
        }
        Expr::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        }
    }

    /// `self + rhs` (folded).
    pub fn plus(self, rhs: Expr) -> Expr {
        Expr::binary(BinOp::Add, self, rhs)
    }

    /// `self - rhs` (folded).
    pub fn minus(self, rhs: Expr) -> Expr {
        Expr::binary(BinOp::Sub, self, rhs)
    }

    /// `self * rhs` (folded).
    pub fn times(self, rhs: Expr) -> Expr {
        Expr::binary(BinOp::Mul, self, rhs)
    }

    /// `self // rhs` (folded).
    pub fn floor_div(self, rhs: Expr) -> Expr {
        Expr::binary(BinOp::FloorDiv, self, rhs)
    }

    /// `self <op> rhs`.
    pub fn compare(self, op: CmpOp, rhs: Expr) -> Expr {
        Expr::Compare {
            op,
            lhs: Box::new(self),
            rhs: Box::new(rhs),
        }
    }

    /// `self[index]`.
    pub fn index(self, index: Vec<IndexPart>) -> Expr {
        Expr::Index {
            base: Box::new(self),
            index,
        }
    }

    /// `self.at[index]`.
    pub fn at(self, index: Vec<IndexPart>) -> Expr {
        Expr::At {
            base: Box::new(self),
            index,
        }
    }

    /// `self.astype(jnp.<dtype>)`.
    pub fn astype(self, dtype: DType) -> Expr {
        Expr::Astype {
            value: Box::new(self),
            dtype,
        }
    }

    /// `pl.ds(start, size)`.
    pub fn ds(start: Expr, size: Expr) -> Expr {
        Expr::Ds {
            start: Box::new(start),
            size: Box::new(size),
        }
    }

    /// `pl.multiple_of(value, multiple)`.
    pub fn multiple_of(value: Expr, multiple: Expr) -> Expr {
        Expr::MultipleOf {
            value: Box::new(value),
            multiple: Box::new(multiple),
        }
    }

    /// The int value of a literal.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Expr::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// Whether the expression is a name or an int literal: cheap and pure to repeat, so the
    /// lowering uses it in place rather than binding it to a fresh name first.
    pub fn is_atom(&self) -> bool {
        matches!(self, Expr::Name(_) | Expr::Int(_))
    }
}

impl From<Jnp> for Expr {
    fn from(j: Jnp) -> Expr {
        Expr::Jnp(j)
    }
}

impl IndexPart {
    fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            IndexPart::Expr(e) => e.walk_mut(f),
            IndexPart::Full
            | IndexPart::NewAxis
            | IndexPart::Ellipsis
            | IndexPart::Int(_)
            | IndexPart::Slice { .. } => {}
        }
    }
}

impl Expr {
    /// Calls `f` on every sub-expression and then on `self` (post-order), mutably: the hook for
    /// rewriting passes such as fault injection.
    pub fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Expr::Name(_) | Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::None => {}
            Expr::ProgramId(_) => {}
            Expr::Tuple(items) => items.iter_mut().for_each(|x| x.walk_mut(f)),
            Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } => {
                lhs.walk_mut(f);
                rhs.walk_mut(f);
            }
            Expr::Neg(v) => v.walk_mut(f),
            Expr::Index { base, index } | Expr::At { base, index } => {
                base.walk_mut(f);
                index.iter_mut().for_each(|p| p.walk_mut(f));
            }
            Expr::RefReshape { base, .. } => base.walk_mut(f),
            Expr::Astype { value, .. } => value.walk_mut(f),
            Expr::Ds { start, size } => {
                start.walk_mut(f);
                size.walk_mut(f);
            }
            Expr::MultipleOf { value, multiple } => {
                value.walk_mut(f);
                multiple.walk_mut(f);
            }
            Expr::Jnp(j) => j.walk_mut(f),
            Expr::ForiLoop {
                lower, upper, init, ..
            } => {
                lower.walk_mut(f);
                upper.walk_mut(f);
                init.walk_mut(f);
            }
            Expr::Cond { pred, operands, .. } => {
                pred.walk_mut(f);
                operands.iter_mut().for_each(|x| x.walk_mut(f));
            }
            Expr::EmitPipeline { grid, .. } => grid.iter_mut().for_each(|x| x.walk_mut(f)),
        }
        f(self);
    }
}

impl Jnp {
    fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Jnp::Clip { x, lo, hi } => {
                x.walk_mut(f);
                lo.walk_mut(f);
                hi.walk_mut(f);
            }
            Jnp::Minimum(a, b) | Jnp::Maximum(a, b) => {
                a.walk_mut(f);
                b.walk_mut(f);
            }
            Jnp::Arange { start, stop, .. } => {
                start.walk_mut(f);
                stop.walk_mut(f);
            }
            Jnp::Zeros { shape, .. } => shape.iter_mut().for_each(|x| x.walk_mut(f)),
            Jnp::Full { shape, value, .. } => {
                shape.iter_mut().for_each(|x| x.walk_mut(f));
                value.walk_mut(f);
            }
            Jnp::Sum { x, .. }
            | Jnp::Reshape { x, .. }
            | Jnp::Transpose { x, .. }
            | Jnp::BroadcastTo { x, .. } => x.walk_mut(f),
            Jnp::DynamicSliceInDim { x, start, .. } => {
                x.walk_mut(f);
                start.walk_mut(f);
            }
            Jnp::Where { cond, a, b } => {
                cond.walk_mut(f);
                a.walk_mut(f);
                b.walk_mut(f);
            }
            Jnp::DotGeneral { lhs, rhs, .. } => {
                lhs.walk_mut(f);
                rhs.walk_mut(f);
            }
            Jnp::OneHot { x, .. } => x.walk_mut(f),
        }
    }
}

impl Stmt {
    /// Calls [`Expr::walk_mut`] on every expression of the statement, nested bodies included.
    pub fn walk_exprs_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Stmt::Assign { value, .. } | Stmt::Expr(value) => value.walk_mut(f),
            Stmt::Store {
                target,
                index,
                value,
            } => {
                target.walk_mut(f);
                index.iter_mut().for_each(|p| p.walk_mut(f));
                value.walk_mut(f);
            }
            Stmt::For {
                start,
                stop,
                step,
                body,
                ..
            } => {
                start.walk_mut(f);
                stop.walk_mut(f);
                if let Some(s) = step {
                    s.walk_mut(f);
                }
                body.iter_mut().for_each(|s| s.walk_exprs_mut(f));
            }
            Stmt::Def(func) => func.walk_exprs_mut(f),
            Stmt::Return(v) => {
                if let Some(v) = v {
                    v.walk_mut(f);
                }
            }
            Stmt::When { pred, body } => {
                pred.walk_mut(f);
                body.walk_exprs_mut(f);
            }
            Stmt::AsyncCopy { src, dst, sem, .. } => {
                src.walk_mut(f);
                dst.walk_mut(f);
                sem.walk_mut(f);
            }
        }
    }
}

impl Function {
    /// Calls [`Expr::walk_mut`] on every expression of the body, nested functions included.
    pub fn walk_exprs_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        self.body.iter_mut().for_each(|s| s.walk_exprs_mut(f));
    }
}
