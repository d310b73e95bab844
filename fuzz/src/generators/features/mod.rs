//! Coverage tags: what a case exercises, for campaign coverage tables.
//!
//! [`features`] reads the IR itself (not the generator's choices), so it tags any case — fixed
//! up, reduced or written by hand — the same way. Two kinds of tag:
//! - [`Surface`]: one per IR form (every variant of `ExprKind`, `Index`, `StmtKind`, `ViewOp`,
//!   `TileAttr`, `AtomicOp`, `Ctor`, `InputOp`, `BinOp`, `CmpOp`, ...), mapped by exhaustive
//!   matches with no `_` arm: a new IR form fails to compile here until it has a tag, and the
//!   generator's coverage test then fails until the generator produces it;
//! - the corners of the resident-Ref planner (spec §2, §4): each narrowing index form crossed
//!   with the loop type and whether it sits in a branch, non-zero loop begins, extents the block
//!   does not divide, loops over the live extent, writes to a loaded tensor (direct or through a
//!   host alias), whole-block consumers, ...
//!
//! Layout: this module owns the tags and [`features`]; `walk` the walk over modules and
//! statements, `exprs` expressions and surface tags, `index_forms` the forms of narrowing
//! subscript entries.

mod exprs;
mod index_forms;
mod walk;

use lang::ir::{Case, DType, LoopType};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use walk::{Out, Walker};

macro_rules! surface {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, )*) => {
        /// One IR form (see the module docs).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum Surface { $( $(#[$doc])* $variant, )* }

        impl Surface {
            /// Every form, in declaration order.
            pub const ALL: &'static [Surface] = &[ $( Surface::$variant, )* ];

            /// A stable kebab-case name, e.g. `expr-tile-attr`.
            pub fn name(self) -> &'static str {
                match self { $( Surface::$variant => $name, )* }
            }
        }
    };
}

surface! {
    /// `ExprKind::Name`.
    ExprName = "expr-name",
    /// `ExprKind::Int`.
    ExprInt = "expr-int",
    /// `ExprKind::Float`.
    ExprFloat = "expr-float",
    /// `ExprKind::Size`.
    ExprSize = "expr-size",
    /// `ExprKind::TileAttr`.
    ExprTileAttr = "expr-tile-attr",
    /// `ExprKind::Binary`.
    ExprBinary = "expr-binary",
    /// `ExprKind::Compare`.
    ExprCompare = "expr-compare",
    /// `ExprKind::Load` written `x[...]`.
    ExprLoad = "expr-load",
    /// `ExprKind::Load` written `hl.load(...)`.
    ExprLoadExplicit = "expr-load-explicit",
    /// `ExprKind::Subscript`.
    ExprSubscript = "expr-subscript",
    /// `ExprKind::Arange`.
    ExprArange = "expr-arange",
    /// `ExprKind::Zeros`.
    ExprZeros = "expr-zeros",
    /// `ExprKind::Full`.
    ExprFull = "expr-full",
    /// `ExprKind::Cast`.
    ExprCast = "expr-cast",
    /// `ExprKind::Sum`.
    ExprSum = "expr-sum",
    /// `ExprKind::View`.
    ExprView = "expr-view",
    /// `ExprKind::Permute`.
    ExprPermute = "expr-permute",
    /// `ExprKind::Alloc`.
    ExprAlloc = "expr-alloc",
    /// `ExprKind::Op` (a torch or `hl` op: `lang::ir::ops`).
    ExprOp = "expr-op",
    /// `Index::Full`.
    IndexFull = "index-full",
    /// `Index::NewAxis`.
    IndexNewAxis = "index-new-axis",
    /// `Index::Int`.
    IndexInt = "index-int",
    /// `Index::Slice`.
    IndexSlice = "index-slice",
    /// `Index::Expr`.
    IndexExpr = "index-expr",
    /// `StmtKind::Assign`.
    StmtAssign = "stmt-assign",
    /// `StmtKind::AugAssign`.
    StmtAugAssign = "stmt-aug-assign",
    /// `StmtKind::Store` written `t[...] = v`.
    StmtStore = "stmt-store",
    /// `StmtKind::Store` written `hl.store(...)`.
    StmtStoreExplicit = "stmt-store-explicit",
    /// `StmtKind::Atomic`.
    StmtAtomic = "stmt-atomic",
    /// `StmtKind::For`.
    StmtFor = "stmt-for",
    /// `StmtKind::If`.
    StmtIf = "stmt-if",
    /// `StmtKind::If` with an `else`.
    StmtIfElse = "stmt-if-else",
    /// `StmtKind::Return`.
    StmtReturn = "stmt-return",
    /// `LoopKind::Tile`.
    LoopTile = "loop-tile",
    /// `LoopKind::Grid`.
    LoopGrid = "loop-grid",
    /// A loop with `block_size=`.
    LoopFixedBlock = "loop-fixed-block",
    /// A loop with two bounds.
    LoopBegin = "loop-begin",
    /// `TileAttr::Begin`.
    AttrBegin = "attr-begin",
    /// `TileAttr::End`.
    AttrEnd = "attr-end",
    /// `TileAttr::Index`.
    AttrIndex = "attr-index",
    /// `TileAttr::Count`.
    AttrCount = "attr-count",
    /// `TileAttr::BlockSize`.
    AttrBlockSize = "attr-block-size",
    /// `TileAttr::Id`.
    AttrId = "attr-id",
    /// `BinOp::Add`.
    BinAdd = "bin-add",
    /// `BinOp::Sub`.
    BinSub = "bin-sub",
    /// `BinOp::Mul`.
    BinMul = "bin-mul",
    /// `BinOp::Div`.
    BinDiv = "bin-div",
    /// `BinOp::FloorDiv`.
    BinFloorDiv = "bin-floor-div",
    /// `CmpOp::Ge`.
    CmpGe = "cmp-ge",
    /// `CmpOp::Gt`.
    CmpGt = "cmp-gt",
    /// `CmpOp::Le`.
    CmpLe = "cmp-le",
    /// `CmpOp::Lt`.
    CmpLt = "cmp-lt",
    /// `CmpOp::Eq`.
    CmpEq = "cmp-eq",
    /// `CmpOp::Ne`.
    CmpNe = "cmp-ne",
    /// `ViewOp::Reshape`.
    ViewReshape = "view-reshape",
    /// `ViewOp::View`.
    ViewView = "view-view",
    /// `ViewOp::Squeeze`.
    ViewSqueeze = "view-squeeze",
    /// `ViewOp::Unsqueeze`.
    ViewUnsqueeze = "view-unsqueeze",
    /// `ViewOp::ViewAs`.
    ViewViewAs = "view-view-as",
    /// `AtomicOp::Add`.
    AtomicAdd = "atomic-add",
    /// `AtomicOp::And`.
    AtomicAnd = "atomic-and",
    /// `AtomicOp::Cas`.
    AtomicCas = "atomic-cas",
    /// `AtomicOp::Max`.
    AtomicMax = "atomic-max",
    /// `AtomicOp::Min`.
    AtomicMin = "atomic-min",
    /// `AtomicOp::Or`.
    AtomicOr = "atomic-or",
    /// `AtomicOp::Xchg`.
    AtomicXchg = "atomic-xchg",
    /// `AtomicOp::Xor`.
    AtomicXor = "atomic-xor",
    /// `AllocKind::Empty`.
    AllocEmpty = "alloc-empty",
    /// `AllocKind::Zeros`.
    AllocZeros = "alloc-zeros",
    /// `AllocShape::Dims`.
    AllocDims = "alloc-dims",
    /// `AllocShape::Like`.
    AllocLike = "alloc-like",
    /// `Ctor::Randn`.
    CtorRandn = "ctor-randn",
    /// `Ctor::Rand`.
    CtorRand = "ctor-rand",
    /// `Ctor::Ones`.
    CtorOnes = "ctor-ones",
    /// `Ctor::Zeros`.
    CtorZeros = "ctor-zeros",
    /// `Ctor::Full`.
    CtorFull = "ctor-full",
    /// `Ctor::Arange`.
    CtorArange = "ctor-arange",
    /// `Ctor::Range`.
    CtorRange = "ctor-range",
    /// `Ctor::Eye`.
    CtorEye = "ctor-eye",
    /// `Ctor::Randint`.
    CtorRandint = "ctor-randint",
    /// `Ctor::Tensor`.
    CtorTensor = "ctor-tensor",
    /// `Ctor::Empty`.
    CtorEmpty = "ctor-empty",
    /// `InputOp::Reshape`.
    InputReshape = "input-reshape",
    /// `InputOp::Expand`.
    InputExpand = "input-expand",
    /// `InputOp::Contiguous`.
    InputContiguous = "input-contiguous",
    /// `InputOp::To`.
    InputTo = "input-to",
    /// `ParamKind::Tensor`.
    ParamTensor = "param-tensor",
    /// `ParamKind::Int`.
    ParamInt = "param-int",
    /// `ParamKind::Float` (read from case scripts; not generated).
    ParamFloat = "param-float",
    /// `ParamKind::Bool` (read from case scripts; not generated).
    ParamBool = "param-bool",
    /// `pallas_loop_type` absent (fori_loop or emit_pipeline by default, D-1.5.1-10).
    ConfigLoopTypeAbsent = "config-loop-type-absent",
    /// `pallas_worklist_grouping` present.
    ConfigWorklistGrouping = "config-worklist-grouping",
    /// `pallas_load_buffer_count` present.
    ConfigLoadBufferCount = "config-load-buffer-count",
    /// `torch.manual_seed(N)`.
    Seed = "seed",
    /// `result = kernel(...)`.
    CallResult = "call-result",
}

/// Surface forms the generator never produces, with the reason; the coverage test checks every
/// other form appears.
pub const NOT_GENERATED: &[(Surface, &str)] = &[
    (
        Surface::CtorEmpty,
        "a torch.empty input is poison: reading it makes the case invalid",
    ),
    (
        Surface::ParamFloat,
        "float scalar arguments come from case scripts as Helion's tests write them; our model \
         answers `unsupported` for them, and the grammar draws what the resident-Ref lowering \
         decides",
    ),
    (
        Surface::ParamBool,
        "bool scalar arguments come from case scripts as Helion's tests write them; our model \
         answers `unsupported` for them, as for float scalars",
    ),
];

/// How a subscript entry selects, and what the subscripted value is: the one index-form
/// classifier, behind the coverage table ([`Feature::Index`]) and the signature of a finding in
/// code Helion emitted ([`index_forms`]). Names are resolved through the kernel's assignments
/// (`rows = t.index; blk[rows]` is a named index and a tile index).
///
/// Serialized kebab-case; the aliases are the names signatures used before this classifier was
/// the only one (`meta.json` format 1, `buckets.json` formats 2 to 4, corpus entries blessed
/// then), read on migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexForm {
    /// `blk[2]`.
    Int,
    /// `blk[-1]`.
    NegativeInt,
    /// `blk[1:3]` inside the extent.
    StaticSlice,
    /// `blk[-3:2]`.
    NegativeSlice,
    /// `blk[1:10]` on 4 rows.
    PastExtentSlice,
    /// `blk[2:]`, `blk[:3]`.
    OpenSlice,
    /// `blk[0:4:2]`.
    SteppedSlice,
    /// `blk[2:2]`.
    EmptySlice,
    /// `blk[live - w : live]`.
    TailSlice,
    /// Another slice with a symbolic bound.
    DynamicSlice,
    /// `blk[t.begin]`.
    TileBegin,
    /// `blk[t.index]`.
    TileIndex,
    /// `blk[t.index + 0]` (spec §4 D9: one decision with `t.index`, a separate historical bug).
    #[serde(alias = "tile-index+0")]
    TileIndexPlusZero,
    /// `blk[t.index + k]`, `blk[t.index - k]`, `blk[k + t.index]` with a literal `k ≠ 0`.
    #[serde(alias = "tile-index+k")]
    TileIndexOffset,
    /// `blk[hl.arange(live - w, live)]`.
    #[serde(alias = "tail")]
    TailArange,
    /// `blk[hl.arange(a, b)]` with literal bounds.
    StaticArange,
    /// `blk[hl.arange(a, b)]` with a symbolic bound that is not a tail run.
    DynamicArange,
    /// `blk[a + hl.arange(n)]`.
    OffsetArange,
    /// `blk[hl.arange(a, b, s)]`, `s > 1`.
    StridedArange,
    /// `blk[rows]`, `rows` bound earlier (also tagged with the form of what it is bound to).
    NamedIndex,
    /// Any other expression (`t.end`, `t.id`, an int parameter, a tensor).
    #[serde(alias = "sym-int", alias = "other-tensor")]
    OtherExpr,
    /// Several narrowing entries in one subscript.
    MultipleNarrowing,
    /// A `None` entry: a new axis.
    #[serde(alias = "none")]
    NewAxis,
    /// The subscripted value is a view (`reshape`, `view`, `squeeze`, `unsqueeze`) of a block.
    #[serde(alias = "view")]
    OfView,
    /// The subscripted value is itself a subscript (`part = blk[1:3]; part[0]`).
    #[serde(alias = "nested")]
    OfSubscript,
}

impl IndexForm {
    /// Whether the generator draws this form to test a refusal: Helion 1.5.1 refuses every
    /// read of a block in this form (the rule in each arm), so a case holding one reaches its
    /// code generation only when that read is dead code. Measured: none of 20,000 cases of
    /// `fuzz --engines oracle,pallas-sim --seed 4048` holding any of them was lowered by the
    /// model, and none of 1,500 of `--seed 4047` reached Helion's code generation. The reach
    /// table marks such a cell as a refusal test instead of a generator gap.
    pub fn refusal_test(self) -> bool {
        match self {
            // `trace.negative-index`, `trace.slice-negative-start`, `trace.slice-missing-bound`,
            // `trace.slice-step`, `trace.slice-empty`, `trace.multiple-narrowing`.
            IndexForm::NegativeInt
            | IndexForm::NegativeSlice
            | IndexForm::OpenSlice
            | IndexForm::SteppedSlice
            | IndexForm::EmptySlice
            | IndexForm::MultipleNarrowing => true,
            // `selector.wider-than-block`: the stop is past the block, which the static-value
            // fallback (D-1.5.1-01) does not take either.
            IndexForm::PastExtentSlice => true,
            // `selector.shifted-tile-run`; `selector.tail-not-contiguous` (the d13 defect
            // accepted a strided iota as contiguous).
            IndexForm::TileIndexOffset | IndexForm::StridedArange => true,
            IndexForm::Int
            | IndexForm::StaticSlice
            | IndexForm::TailSlice
            | IndexForm::DynamicSlice
            | IndexForm::TileBegin
            | IndexForm::TileIndex
            | IndexForm::TileIndexPlusZero
            | IndexForm::TailArange
            | IndexForm::StaticArange
            | IndexForm::DynamicArange
            | IndexForm::OffsetArange
            | IndexForm::NamedIndex
            | IndexForm::OtherExpr
            | IndexForm::NewAxis
            | IndexForm::OfView
            | IndexForm::OfSubscript => false,
        }
    }

    /// The kebab-case name (what serde writes).
    pub fn name(self) -> &'static str {
        match self {
            IndexForm::Int => "int",
            IndexForm::NegativeInt => "negative-int",
            IndexForm::StaticSlice => "static-slice",
            IndexForm::NegativeSlice => "negative-slice",
            IndexForm::PastExtentSlice => "past-extent-slice",
            IndexForm::OpenSlice => "open-slice",
            IndexForm::SteppedSlice => "stepped-slice",
            IndexForm::EmptySlice => "empty-slice",
            IndexForm::TailSlice => "tail-slice",
            IndexForm::DynamicSlice => "dynamic-slice",
            IndexForm::TileBegin => "tile-begin",
            IndexForm::TileIndex => "tile-index",
            IndexForm::TileIndexPlusZero => "tile-index-plus-zero",
            IndexForm::TileIndexOffset => "tile-index-offset",
            IndexForm::TailArange => "tail-arange",
            IndexForm::StaticArange => "static-arange",
            IndexForm::DynamicArange => "dynamic-arange",
            IndexForm::OffsetArange => "offset-arange",
            IndexForm::StridedArange => "strided-arange",
            IndexForm::NamedIndex => "named-index",
            IndexForm::OtherExpr => "other-expr",
            IndexForm::MultipleNarrowing => "multiple-narrowing",
            IndexForm::NewAxis => "new-axis",
            IndexForm::OfView => "of-view",
            IndexForm::OfSubscript => "of-subscript",
        }
    }
}

impl fmt::Display for IndexForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// What kind of view a case applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViewKind {
    /// `.reshape(...)`.
    Reshape,
    /// `.view(...)`.
    View,
    /// `.squeeze(d)`.
    Squeeze,
    /// `.unsqueeze(d)`.
    Unsqueeze,
    /// `.view_as(t)`.
    ViewAs,
    /// A subscript of only `None` and `:` entries.
    NoneSubscript,
}

/// One thing a case exercises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Feature {
    /// A narrowing subscript entry: its form, the case's loop type, and whether it sits in an
    /// `if` branch (the tail position).
    Index {
        /// How it selects.
        form: IndexForm,
        /// `pallas_loop_type` in effect.
        loop_type: LoopType,
        /// Inside an `if`.
        in_branch: bool,
    },
    /// A `None` entry at this position of a subscript.
    NoneAt(u8),
    /// A tile loop whose begin is not zero.
    NonZeroBegin,
    /// A tile loop whose extent the (effective) block does not divide.
    NonDividingExtent,
    /// A tile loop whose extent the block divides.
    DividingExtent,
    /// A tile loop whose extent is one row past a multiple of its block (two rows or more):
    /// its last tile holds a single row.
    ExtentOneAboveBlock,
    /// A tile loop whose extent is one row short of a multiple of its block (two rows or
    /// more): its last tile is one row short of full. (Under a block of two, both this and
    /// [`Feature::ExtentOneAboveBlock`].)
    ExtentOneBelowBlock,
    /// An input tensor with a single row (first dim 1).
    SingleRowInput,
    /// An input tensor with no rows (first dim 0).
    EmptyInput,
    /// `hl.tile(live)` with `live = t.end - t.begin`.
    LiveLoop,
    /// `hl.tile(live - k)`.
    ShiftedLiveLoop,
    /// `hl.tile(t.begin, ...)`: an inner loop over absolute rows from an enclosing tile's begin.
    TileBeginLoop,
    /// A load whose index is a load of an index tensor (`x[idx[outer], ...]`): a gather.
    Gather,
    /// A nested tile loop over a static extent.
    StaticInnerLoop,
    /// An `if` on the live extent.
    LiveBranch,
    /// A branch with an `else`.
    ElseBranch,
    /// A store to a tensor the kernel also loads.
    DirectWrite,
    /// A store or atomic to a host alias (`x.view_as(x)`) of a loaded tensor.
    AliasWrite,
    /// An atomic to a loaded tensor.
    AtomicWrite,
    /// A loaded block consumed whole (cast, sum, arithmetic) as well as narrowed.
    WholeBlockConsumer,
    /// A view of a device value.
    View(ViewKind),
    /// `.permute` of a device value.
    Permute,
    /// A tile attribute used as a value (not an index or a bound).
    TileAttrValue(AttrTag),
    /// An input tensor of this dtype.
    DType(DType),
    /// The case's loop type.
    LoopType(LoopType),
    /// `hl.grid(G)` with `G > 1`.
    GridOverRows,
    /// A tile loop that is the launch grid.
    TopLevelTile,
    /// Deepest loop nesting.
    LoopDepth(u8),
    /// An input with one distinct power of two per row.
    PowerOfTwoRows,
    /// A random input (`torch.randn`, `torch.rand`).
    RandomValues,
    /// An `torch.arange`-based input.
    ArangeValues,
    /// A product of two narrowing reads of one loaded block (`x_block[i + -1] * x_block[i]`):
    /// rows are paired, so a read of the wrong rows shows even where a sum over the tile would
    /// hide it (helion #2006).
    PairedReads,
    /// An accumulator update whose result depends on the iteration order (`acc = acc * c + v`,
    /// `acc = v - acc`).
    OrderDependentUpdate,
    /// A torch op of the kernel body (`lang::ir::ops`).
    TorchOp(OpTag),
    /// An IR form.
    Surface(Surface),
}

/// A [`lang::ir::TensorOp`], as a tag (orderable, its parameters dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpTag {
    /// `torch.exp`.
    Exp,
    /// `torch.relu`.
    Relu,
    /// `torch.rsqrt`.
    Rsqrt,
    /// `torch.maximum`.
    Maximum,
    /// `torch.minimum`.
    Minimum,
    /// `%`.
    Mod,
    /// `&`.
    And,
    /// `|`.
    Or,
    /// A comparison as a mask.
    Cmp,
    /// `torch.where`.
    Where,
    /// `torch.sum` over several dims, all, or with `keepdim`.
    Sum,
    /// `torch.amax`.
    Amax,
    /// `torch.amin`.
    Amin,
    /// `.transpose`.
    Transpose,
    /// `torch.matmul`.
    Matmul,
    /// `torch.bmm`.
    Bmm,
    /// `torch.addmm`.
    Addmm,
    /// `torch.baddbmm`.
    Baddbmm,
    /// `hl.dot`.
    Dot,
    /// A float elementwise function (`torch.sigmoid`, `torch.sin`, ...; never generated: read
    /// from case scripts).
    Unary,
    /// `torch.nn.functional.pad` (never generated: read from case scripts).
    Pad,
    /// `torch.argmax`/`torch.argmin` (never generated: read from case scripts).
    ArgReduce,
    /// Python's `min`/`max` of ints in a loop bound (never generated: read from case
    /// scripts).
    IntMinMax,
}

impl OpTag {
    /// The tag of `op`.
    pub fn of(op: &lang::ir::TensorOp) -> OpTag {
        use lang::ir::{ReduceKind, TensorOp};
        match op {
            TensorOp::Exp => OpTag::Exp,
            TensorOp::Relu => OpTag::Relu,
            TensorOp::Rsqrt => OpTag::Rsqrt,
            TensorOp::Maximum => OpTag::Maximum,
            TensorOp::Minimum => OpTag::Minimum,
            TensorOp::Mod => OpTag::Mod,
            TensorOp::And => OpTag::And,
            TensorOp::Or => OpTag::Or,
            TensorOp::Cmp(_) => OpTag::Cmp,
            TensorOp::Where => OpTag::Where,
            TensorOp::Reduce { kind, .. } => match kind {
                ReduceKind::Sum => OpTag::Sum,
                ReduceKind::Amax => OpTag::Amax,
                ReduceKind::Amin => OpTag::Amin,
                ReduceKind::Argmax | ReduceKind::Argmin => OpTag::ArgReduce,
            },
            TensorOp::Transpose(..) => OpTag::Transpose,
            TensorOp::Matmul => OpTag::Matmul,
            TensorOp::Bmm => OpTag::Bmm,
            TensorOp::Addmm => OpTag::Addmm,
            TensorOp::Baddbmm => OpTag::Baddbmm,
            TensorOp::Dot => OpTag::Dot,
            TensorOp::Unary(_) => OpTag::Unary,
            TensorOp::Pad(_) => OpTag::Pad,
            TensorOp::IntMin | TensorOp::IntMax => OpTag::IntMinMax,
        }
    }
}

/// A tile attribute, as a tag (orderable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttrTag {
    /// `.begin`.
    Begin,
    /// `.end`.
    End,
    /// `.index`.
    Index,
    /// `.count`.
    Count,
    /// `.block_size`.
    BlockSize,
    /// `.id`.
    Id,
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kebab = |v: &dyn erased::Ser| v.kebab();
        match self {
            Feature::Index {
                form,
                loop_type,
                in_branch,
            } => write!(
                f,
                "index/{}/{}/{}",
                kebab(form),
                loop_type.name(),
                if *in_branch { "branch" } else { "straight" }
            ),
            Feature::NoneAt(p) => write!(f, "none-at/{p}"),
            Feature::View(k) => write!(f, "view/{}", kebab(k)),
            Feature::TileAttrValue(a) => write!(f, "tile-attr-value/{}", kebab(a)),
            Feature::DType(d) => write!(f, "dtype/{d}"),
            Feature::LoopType(l) => write!(f, "loop-type/{}", l.name()),
            Feature::LoopDepth(d) => write!(f, "loop-depth/{d}"),
            Feature::Surface(s) => write!(f, "surface/{}", s.name()),
            Feature::TorchOp(o) => write!(f, "torch-op/{}", kebab(o)),
            other => f.write_str(&kebab(other)),
        }
    }
}

/// Kebab-case names of unit variants through serde (one spelling for JSON and tables).
mod erased {
    pub trait Ser {
        fn kebab(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn kebab(&self) -> String {
            match serde_json::to_value(self) {
                Ok(serde_json::Value::String(s)) => s,
                Ok(other) => other.to_string(),
                Err(e) => format!("<{e}>"),
            }
        }
    }
}

/// What `case` exercises (see the module docs).
pub fn features(case: &Case) -> BTreeSet<Feature> {
    features_sized(case, None)
}

/// [`features`] given the case's effective block sizes (`BlockSizes::effective`, as its
/// compile reports them: [`compiler::compile::Compiled::block_sizes`]), which a campaign has
/// already. Working them out again was a third of `features` (1.9% of an in-process
/// campaign's CPU, perf, 2026-12-04).
pub fn features_sized(case: &Case, effective: Option<&[i64]>) -> BTreeSet<Feature> {
    let mut w = Walker::new(case, effective);
    let mut out = Out::default();
    w.module(&mut out);
    w.body(&case.kernel.body, 0, false, &mut out);
    out.finish()
}

/// The index forms of the kernel's device subscripts, whatever loop type or branch they sit
/// in: what a signature of a finding in code Helion emitted records.
pub fn index_forms(case: &Case) -> BTreeSet<IndexForm> {
    features(case)
        .into_iter()
        .filter_map(|f| {
            let Feature::Index { form, .. } = f else {
                return None;
            };
            Some(form)
        })
        .collect()
}
