//! The kernel IR: the one typed representation of a case that every part of pallas-diff works on.
//!
//! A [`Case`] is a kernel, the config it is compiled under, and the inputs it runs on. The kernel
//! is a tree of *graphs* in Helion's sense (spec §7 item 1): the kernel body is the root graph,
//! every `hl.grid`/`hl.tile` loop body is a loop graph (its block ids come from
//! [`blocks::BlockTable`], in Helion's registration order), and every `if`/`else` branch is a
//! branch graph whose captures are the outer names it reads ([`Stmt::captures`]-style analysis
//! lives in [`scope`]). Statements and expressions carry the source [`Span`] they were parsed
//! from; symbolic ints are affine forms ([`sym::Affine`]).
//!
//! The IR is serde-serializable with a stable JSON form (`"version": 1`); enum variants are
//! tagged by kebab-case names. Every `match` over [`ExprKind`], [`Index`] and [`StmtKind`] in the
//! workspace's library code is exhaustive (no `_` arm): a `match` classifies, deciding what each
//! form means, so a new form fails to compile until the frontend, renderer, reference, planner
//! and generator handle it. A projection that picks one form out (the int literal an expression
//! is, [`Expr::as_int`]; the tile a bound resolves to) is not written as a `match` but with
//! `if let`, `let … else`, `matches!` or such a helper, and answers `None` or `false` for every
//! other form, new ones included. Tests pick out what they check as they like.

pub mod arith;
pub mod blocks;
pub mod dead;
pub mod float_json;
pub mod hash;
pub mod inputs;
pub mod live;
pub mod ops;
pub mod scope;
pub mod settings;
pub mod sym;
pub mod types;
pub mod walk;

pub use crate::tensor::DType;
pub use ops::{ReduceKind, TensorOp, UnaryFn};
use serde::{Deserialize, Serialize};

/// The version of the case format this build reads and writes.
pub const CASE_VERSION: u32 = 1;

/// A source position: 1-based line and 1-based column of the construct's first character.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Span {
    /// 1-based line; 0 means "no source" (a generated node not yet rendered).
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

impl Span {
    /// A span at `line:col`.
    pub fn new(line: u32, col: u32) -> Span {
        Span { line, col }
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A kernel, the config it is compiled under, and the inputs it runs on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// Format version ([`CASE_VERSION`]).
    pub version: u32,
    /// The `@helion.kernel` function.
    pub kernel: Kernel,
    /// The `helion.Config` of the decorator.
    pub config: Config,
    /// Module-level input tensors, in definition order.
    pub inputs: Vec<Input>,
    /// `torch.manual_seed(N)` before the inputs, if any: seeds the random constructors.
    pub seed: Option<u64>,
    /// The one call of the kernel.
    pub call: Call,
}

/// The `@helion.kernel`-decorated function.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    /// Function name.
    pub name: String,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Body (the root graph): host statements and the device loops.
    pub body: Vec<Stmt>,
    /// Position of the `def`.
    pub span: Span,
}

impl Kernel {
    /// Whether the root graph returns values (`return v, ...`).
    pub fn returns_values(&self) -> bool {
        self.body
            .iter()
            .any(|s| matches!(&s.kind, StmtKind::Return(v) if !v.is_empty()))
    }

    /// The outputs of a kernel that returns nothing: what it wrote, i.e. the tensor parameters
    /// it stores or applies an atomic into (anywhere in its body), in parameter order, as
    /// indices into [`Kernel::params`]. Empty for a kernel that returns values (its outputs are
    /// those). Every engine's outputs of such a kernel are these tensors after the call.
    pub fn written_params(&self) -> Vec<usize> {
        if self.returns_values() {
            return Vec::new();
        }
        let mut written: Vec<&str> = Vec::new();
        walk::each_stmt(&self.body, &mut |s| {
            if let StmtKind::Store { tensor, .. } | StmtKind::Atomic { tensor, .. } = &s.kind {
                written.push(tensor);
            }
        });
        self.params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == ParamKind::Tensor && written.contains(&p.name.as_str()))
            .map(|(i, _)| i)
            .collect()
    }
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// Parameter name.
    pub name: String,
    /// Annotated kind.
    pub kind: ParamKind,
    /// Position of the parameter.
    pub span: Span,
}

/// The annotation of a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParamKind {
    /// `torch.Tensor`.
    Tensor,
    /// `int` (a host scalar, static under `static_shapes=True`).
    Int,
    /// `float` (a host scalar Helion passes to the kernel; in device arithmetic it is a Python
    /// float, weakly typed like a float literal).
    Float,
    /// `bool` (a host scalar Helion passes to the kernel as a one-element operand and branches
    /// on with `lax.cond`): a condition of `if`, on the host or on the device.
    Bool,
}

/// `helion.Config(...)`: the knobs that change the lowering (spec §1.1). Absent keys stay absent
/// (so a rendered case says exactly what its source said).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// One block size per config-driven block id, in registration order.
    pub block_sizes: Vec<i64>,
    /// `pallas_loop_type`; absent means Helion 1.5.1's default ([`Case::effective_loop_type`]).
    pub loop_type: Option<LoopType>,
    /// `pallas_worklist_grouping` ∈ {0, 1, 2}.
    pub worklist_grouping: Option<i64>,
    /// `pallas_load_buffer_count`: one entry per tensor parameter (D-1.5.1-11).
    pub load_buffer_count: Option<Vec<i64>>,
    /// Other `helion.Config` keys, as written ([`settings`]): passed to Helion, not read by the
    /// model ([`Config::unmodelled`]). Absent from the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<settings::Setting>,
    /// Keywords of `@helion.kernel` beside `backend` and `config` (Helion settings, e.g.
    /// `static_shapes=False`; `static_shapes=True`, the default, is not kept), as written
    /// ([`settings`]). Absent from the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<settings::Setting>,
}

/// `pallas_loop_type` (spec §1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopType {
    /// A Python `for` over static bounds in the kernel body.
    Unroll,
    /// `jax.lax.fori_loop` with a nested body closure.
    ForiLoop,
    /// `pltpu.emit_pipeline`.
    EmitPipeline,
}

impl LoopType {
    /// All loop types.
    pub const ALL: [LoopType; 3] = [LoopType::Unroll, LoopType::ForiLoop, LoopType::EmitPipeline];

    /// The config spelling (`"unroll"`, `"fori_loop"`, `"emit_pipeline"`).
    pub fn name(self) -> &'static str {
        match self {
            LoopType::Unroll => "unroll",
            LoopType::ForiLoop => "fori_loop",
            LoopType::EmitPipeline => "emit_pipeline",
        }
    }

    /// Parses the config spelling.
    pub fn from_name(name: &str) -> Option<LoopType> {
        LoopType::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// A module-level input tensor: `name = <ctor>(...)<.chain>...`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Variable name.
    pub name: String,
    /// The constructor call.
    pub ctor: Ctor,
    /// `dtype=` of the constructor, if given.
    pub dtype: Option<DType>,
    /// `.reshape(...)`, `.expand(...)`, `.contiguous()`, `.to(dtype)` applied after it, in order.
    pub chain: Vec<InputOp>,
    /// Position of the assignment.
    pub span: Span,
}

/// The constructor of an input tensor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ctor {
    /// `torch.randn(*shape)`: standard normal from pallas-diff's seeded generator.
    Randn {
        /// Shape.
        shape: Vec<usize>,
    },
    /// `torch.rand(*shape)`: uniform on [0, 1) from pallas-diff's seeded generator.
    Rand {
        /// Shape.
        shape: Vec<usize>,
    },
    /// `torch.ones(*shape)`.
    Ones {
        /// Shape.
        shape: Vec<usize>,
    },
    /// `torch.zeros(*shape)`.
    Zeros {
        /// Shape.
        shape: Vec<usize>,
    },
    /// `torch.full([shape], value)`.
    Full {
        /// Shape.
        shape: Vec<usize>,
        /// Fill value.
        value: f64,
    },
    /// `torch.arange(n)`.
    Arange {
        /// Length.
        n: usize,
    },
    /// `torch.arange(start, end[, step])`: `start`, `start + step`, ... strictly before `end`,
    /// as torch: counting up (`step > 0`, `end >= start`) or down (`step < 0`, `end <= start`:
    /// `torch.arange(127, -1, -1)` is 127, ..., 0); `step != 0`.
    Range {
        /// First value.
        start: i64,
        /// Bound (excluded).
        end: i64,
        /// Step.
        step: i64,
    },
    /// `torch.eye(n[, m])`: ones on the diagonal of an `n` x `m` matrix, zeros elsewhere.
    Eye {
        /// Rows.
        n: usize,
        /// Columns.
        m: usize,
    },
    /// `torch.randint(low, high, size)`: uniform integers in `[low, high)` from
    /// pallas-diff's seeded generator (as `torch.randn` is; `python case.py` draws torch's own).
    Randint {
        /// Lowest value.
        low: i64,
        /// Bound (excluded).
        high: i64,
        /// Shape.
        shape: Vec<usize>,
    },
    /// `torch.tensor([...])` from a nested list.
    Tensor {
        /// Shape of the nested list.
        shape: Vec<usize>,
        /// Row-major values.
        values: Vec<f64>,
        /// Whether the literal was written with float literals (`1.0`), which makes its default
        /// dtype float32; int literals need an explicit `dtype=torch.int32`.
        float_literals: bool,
    },
    /// `torch.empty(*shape)`: poison; reading it is an invalid case.
    Empty {
        /// Shape.
        shape: Vec<usize>,
    },
}

/// A method applied to an input after its constructor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputOp {
    /// `.reshape(*dims)` (one `-1` allowed).
    Reshape(Vec<i64>),
    /// `.expand(*dims)` (`-1` keeps a dim).
    Expand(Vec<i64>),
    /// `.contiguous()`.
    Contiguous,
    /// `.to(dtype)`.
    To(DType),
}

/// The kernel call at the end of a case script.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// Arguments in order.
    pub args: Vec<Arg>,
    /// `result = kernel(...)`: the name the result is bound to, if any.
    pub result: Option<String>,
    /// Position of the call.
    pub span: Span,
}

/// An argument of the kernel call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arg {
    /// A module-level input tensor, by name.
    Input(String),
    /// An int literal for an `int` parameter.
    Int(i64),
    /// A finite float literal for a `float` parameter.
    Float(f64),
    /// `True` or `False` for a `bool` parameter.
    Bool(bool),
}

/// A statement with its source position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Position of its first character.
    pub span: Span,
}

/// Statement kinds of the kernel body subset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StmtKind {
    /// `name = value`.
    Assign {
        /// Bound name.
        target: String,
        /// Value.
        value: Expr,
    },
    /// `name += value` (and `-=`, `*=`).
    AugAssign {
        /// Updated name.
        target: String,
        /// The operator.
        op: BinOp,
        /// Right-hand side.
        value: Expr,
    },
    /// `tensor[indices] = value`, or `hl.store(tensor, [indices], value)` when `explicit`.
    Store {
        /// The written tensor (a kernel parameter or a host allocation, or an alias of one).
        tensor: String,
        /// Index entries.
        indices: Vec<Index>,
        /// Stored value.
        value: Expr,
        /// Written as `hl.store(...)`.
        explicit: bool,
    },
    /// `hl.atomic_<op>(tensor, [indices], value)` (`atomic_cas` also takes `expected`).
    Atomic {
        /// Which atomic.
        op: AtomicOp,
        /// The written tensor.
        tensor: String,
        /// Index entries.
        indices: Vec<Index>,
        /// For `atomic_cas`: the compared value (second to last argument).
        expected: Option<Expr>,
        /// The value operand.
        value: Expr,
    },
    /// `for vars in hl.tile(...)` / `hl.grid(...)`: a loop graph.
    For(Loop),
    /// `if cond: ... else: ...`: branch graphs.
    If {
        /// The condition (a comparison of device scalars).
        cond: Expr,
        /// The then-graph.
        then_body: Vec<Stmt>,
        /// The else-graph (empty when absent; `elif` nests an `If` here).
        else_body: Vec<Stmt>,
    },
    /// `return v` or `return a, b`.
    Return(Vec<Expr>),
}

/// A `for` over `hl.tile` or `hl.grid`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Loop {
    /// `hl.tile` or `hl.grid`.
    pub kind: LoopKind,
    /// Loop variables, one per dim (`for tm, tn in hl.tile([m, n])`).
    pub vars: Vec<String>,
    /// One entry per dim.
    pub dims: Vec<LoopDim>,
    /// Whether the bounds were written as lists (`hl.tile([m, n])`); a 1-dim loop written
    /// `hl.tile([m])` keeps its list form in rendering.
    pub list_form: bool,
    /// The loop graph.
    pub body: Vec<Stmt>,
}

/// One dimension of a tile/grid loop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopDim {
    /// Begin bound (`hl.tile(begin, end)`); absent means 0.
    pub begin: Option<Expr>,
    /// End bound.
    pub end: Expr,
    /// `block_size=` (a fixed block id); absent means a config-driven block id.
    pub block_size: Option<Expr>,
}

/// `hl.tile` or `hl.grid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoopKind {
    /// `hl.tile`: the variable is a `Tile` (begin, end, index, ...).
    Tile,
    /// `hl.grid`: the variable is a scalar index (block size 1).
    Grid,
}

/// Helion's atomics (`ATOMIC_OPS`, spec §1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AtomicOp {
    /// `hl.atomic_add`.
    Add,
    /// `hl.atomic_and`.
    And,
    /// `hl.atomic_cas`.
    Cas,
    /// `hl.atomic_max`.
    Max,
    /// `hl.atomic_min`.
    Min,
    /// `hl.atomic_or`.
    Or,
    /// `hl.atomic_xchg`.
    Xchg,
    /// `hl.atomic_xor`.
    Xor,
}

impl AtomicOp {
    /// All atomics.
    pub const ALL: [AtomicOp; 8] = [
        AtomicOp::Add,
        AtomicOp::And,
        AtomicOp::Cas,
        AtomicOp::Max,
        AtomicOp::Min,
        AtomicOp::Or,
        AtomicOp::Xchg,
        AtomicOp::Xor,
    ];

    /// The `hl.` function name, e.g. `atomic_add`.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::And => "atomic_and",
            AtomicOp::Cas => "atomic_cas",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xchg => "atomic_xchg",
            AtomicOp::Xor => "atomic_xor",
        }
    }

    /// Parses a `hl.` function name.
    pub fn from_name(name: &str) -> Option<AtomicOp> {
        AtomicOp::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// An expression with its source position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Position of its first character.
    pub span: Span,
}

/// Expression kinds of the kernel body subset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExprKind {
    /// A variable.
    Name(String),
    /// An int literal (negative literals included).
    Int(i64),
    /// A float literal; non-finite ones are spelled `float("-inf")` (their JSON form is
    /// [`float_json`]'s).
    Float(#[serde(with = "float_json")] f64),
    /// `value.size(dim)`.
    Size {
        /// The sized tensor.
        value: Box<Expr>,
        /// The dim (negative counts from the end).
        dim: i64,
    },
    /// `tile.<attr>`.
    TileAttr {
        /// The tile variable.
        tile: String,
        /// Which attribute.
        attr: TileAttr,
    },
    /// `lhs <op> rhs` on ints or tensors.
    Binary {
        /// Operator.
        op: BinOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `lhs <cmp> rhs` as an `if` condition (a comparison used as a value is the mask
    /// [`TensorOp::Cmp`]).
    Compare {
        /// Comparison.
        op: CmpOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// A load from a host tensor: `x[indices]` or `hl.load(x, [indices])` when `explicit`.
    Load {
        /// The host tensor (parameter, host allocation, or host alias of one).
        tensor: String,
        /// Index entries.
        indices: Vec<Index>,
        /// Written as `hl.load(...)`.
        explicit: bool,
    },
    /// A subscript of a device value (`hl.subscript`): narrowing or not.
    Subscript {
        /// The subscripted device value.
        value: Box<Expr>,
        /// Index entries.
        indices: Vec<Index>,
    },
    /// `hl.arange(end)`, `hl.arange(start, end)`, `hl.arange(start, end, step)`.
    Arange {
        /// Start (absent means 0).
        start: Option<Box<Expr>>,
        /// End (exclusive).
        end: Box<Expr>,
        /// Step (absent means 1).
        step: Option<Box<Expr>>,
    },
    /// `hl.zeros([shape], dtype=...)`.
    Zeros {
        /// Dims.
        shape: Vec<Expr>,
        /// Element type.
        dtype: DType,
    },
    /// `hl.full([shape], value, dtype=...)`.
    Full {
        /// Dims.
        shape: Vec<Expr>,
        /// Fill value.
        value: Box<Expr>,
        /// Element type.
        dtype: DType,
    },
    /// `.float()` (float32) or `.to(dtype)`.
    Cast {
        /// Converted value.
        value: Box<Expr>,
        /// Target type.
        dtype: DType,
    },
    /// `.sum(dim=k)`.
    Sum {
        /// Reduced value.
        value: Box<Expr>,
        /// Reduced dim (negative counts from the end).
        dim: i64,
    },
    /// A view: `.reshape`, `.view`, `.squeeze(d)`, `.unsqueeze(d)`, `.view_as(t)`.
    View {
        /// The viewed value.
        value: Box<Expr>,
        /// Which view.
        op: ViewOp,
    },
    /// `.permute(*dims)` (not a view in Helion's resident-Ref sense).
    Permute {
        /// The permuted value.
        value: Box<Expr>,
        /// The permutation.
        dims: Vec<i64>,
    },
    /// A host-side allocation: `torch.empty`, `torch.zeros`, `torch.empty_like`,
    /// `torch.zeros_like`.
    Alloc {
        /// Which allocator.
        kind: AllocKind,
        /// The shape (`[...]`) or the tensor it is like.
        shape: AllocShape,
        /// `dtype=` if given.
        dtype: Option<DType>,
    },
    /// A torch or `hl` operation on device values ([`ops`]): elementwise functions, `%`,
    /// masks, `torch.where`, reductions, `.transpose`, matrix products.
    Op {
        /// Which operation.
        op: TensorOp,
        /// Its operands, in the order [`TensorOp`] documents.
        args: Vec<Expr>,
    },
}

/// A tile attribute (spec §1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TileAttr {
    /// `t.begin`: the tile's first index.
    Begin,
    /// `t.end`: one past its last live index (clipped at the loop's end).
    End,
    /// `t.index`: the 1-D vector of its indices (block-size long; live ones in eager mode).
    Index,
    /// `t.count`: cdiv(end - begin, block) of its loop.
    Count,
    /// `t.block_size`.
    BlockSize,
    /// `t.id`: begin // block.
    Id,
}

impl TileAttr {
    /// All attributes.
    pub const ALL: [TileAttr; 6] = [
        TileAttr::Begin,
        TileAttr::End,
        TileAttr::Index,
        TileAttr::Count,
        TileAttr::BlockSize,
        TileAttr::Id,
    ];

    /// The Python attribute name.
    pub fn name(self) -> &'static str {
        match self {
            TileAttr::Begin => "begin",
            TileAttr::End => "end",
            TileAttr::Index => "index",
            TileAttr::Count => "count",
            TileAttr::BlockSize => "block_size",
            TileAttr::Id => "id",
        }
    }

    /// Parses the Python attribute name.
    pub fn from_name(name: &str) -> Option<TileAttr> {
        TileAttr::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// Arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
}

impl BinOp {
    /// All operators.
    pub const ALL: [BinOp; 5] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::FloorDiv,
    ];

    /// The Python operator token.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
        }
    }
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CmpOp {
    /// `>=`.
    Ge,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `<`.
    Lt,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
}

impl CmpOp {
    /// All comparisons.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Ge,
        CmpOp::Gt,
        CmpOp::Le,
        CmpOp::Lt,
        CmpOp::Eq,
        CmpOp::Ne,
    ];

    /// The Python operator token.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Ge => ">=",
            CmpOp::Gt => ">",
            CmpOp::Le => "<=",
            CmpOp::Lt => "<",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }

    /// Evaluates the comparison on ints.
    pub fn eval(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Ge => a >= b,
            CmpOp::Gt => a > b,
            CmpOp::Le => a <= b,
            CmpOp::Lt => a < b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}

/// The address-preserving views (the resident-Ref allowlist of spec §2.5, plus `view_as`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViewOp {
    /// `.reshape(*dims)` (`aten.reshape.default`).
    Reshape(Vec<Expr>),
    /// `.view(*dims)` (`aten.view.default`).
    View(Vec<Expr>),
    /// `.squeeze(d)` (`aten.squeeze.dim`).
    Squeeze(i64),
    /// `.unsqueeze(d)` (`aten.unsqueeze.default`).
    Unsqueeze(i64),
    /// `.view_as(other)`: on the host this makes an alias sharing storage (spec §2.9).
    ViewAs(Box<Expr>),
}

/// Host allocators for outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocKind {
    /// `torch.empty` / `torch.empty_like`: contents are poison until written.
    Empty,
    /// `torch.zeros` / `torch.zeros_like`.
    Zeros,
}

/// The shape argument of an allocation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocShape {
    /// `torch.zeros([d0, d1], ...)`.
    Dims(Vec<Expr>),
    /// `torch.zeros_like(t, ...)`.
    Like(Box<Expr>),
}

/// One entry of a subscript's index list (spec §7 item 4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Index {
    /// `:` (the full slice).
    Full,
    /// `None`: inserts a size-1 axis.
    NewAxis,
    /// An int literal, possibly negative (`blk[-1]`).
    Int(i64),
    /// A slice with at least one explicit bound or step: `a:b`, `a:`, `:b`, `a:b:s`.
    Slice {
        /// Start bound.
        start: Option<Expr>,
        /// Stop bound.
        stop: Option<Expr>,
        /// Step.
        step: Option<Expr>,
    },
    /// Any other index expression: a tile variable (in a load), `t.begin`, `t.index`,
    /// `t.index + k`, `hl.arange(...)`, a symbolic int, or a name bound to one of these.
    Expr(Expr),
}

impl Index {
    /// Whether the entry narrows (is neither `None` nor `:`), in Helion's sense.
    pub fn is_narrowing(&self) -> bool {
        match self {
            Index::Full | Index::NewAxis => false,
            Index::Int(_) | Index::Slice { .. } | Index::Expr(_) => true,
        }
    }
}

impl Expr {
    /// An expression at `span`.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// A name expression.
    pub fn name(name: impl Into<String>, span: Span) -> Expr {
        Expr::new(ExprKind::Name(name.into()), span)
    }

    /// An int literal.
    pub fn int(v: i64, span: Span) -> Expr {
        Expr::new(ExprKind::Int(v), span)
    }

    /// The value of an int literal; `None` for any other form (names are not resolved).
    pub fn as_int(&self) -> Option<i64> {
        if let ExprKind::Int(v) = self.kind {
            Some(v)
        } else {
            None
        }
    }
}

impl Stmt {
    /// A statement at `span`.
    pub fn new(kind: StmtKind, span: Span) -> Stmt {
        Stmt { kind, span }
    }
}

/// Identity of one expression node while a case is borrowed: the planner keys its annotations
/// and failures by it, and codegen looks them up by it (Helion keys `node.meta` by FX node).
/// Valid only for the borrow of the `Case` it was taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeKey(usize);

impl NodeKey {
    /// The key of `e`.
    pub fn of(e: &Expr) -> NodeKey {
        NodeKey(e as *const Expr as usize)
    }
}
