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

use lang::ir::blocks::BlockTable;
use lang::ir::hash::FastMap;
use lang::ir::scope::{HostEnv, HostOrigin};
use lang::ir::{
    AllocKind, AllocShape, AtomicOp, BinOp, Case, CmpOp, Ctor, DType, Expr, ExprKind, Index,
    InputOp, LoopKind, LoopType, ParamKind, Stmt, StmtKind, TileAttr, ViewOp,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

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
pub const NOT_GENERATED: &[(Surface, &str)] = &[(
    Surface::CtorEmpty,
    "a torch.empty input is poison: reading it makes the case invalid",
)];

/// How a narrowing subscript entry selects.
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
    /// `blk[t.index + k]`.
    TileIndexOffset,
    /// `blk[hl.arange(live - w, live)]`.
    TailArange,
    /// `blk[hl.arange(a, b)]`.
    StaticArange,
    /// `blk[a + hl.arange(n)]`.
    OffsetArange,
    /// `blk[hl.arange(a, b, s)]`, `s > 1`.
    StridedArange,
    /// `blk[rows]`, `rows` bound earlier.
    NamedIndex,
    /// Any other expression.
    OtherExpr,
    /// Several narrowing entries in one subscript.
    MultipleNarrowing,
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
    /// `hl.tile(live)` with `live = t.end - t.begin`.
    LiveLoop,
    /// `hl.tile(live - k)`.
    ShiftedLiveLoop,
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
    /// An IR form.
    Surface(Surface),
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

fn attr_tag(a: TileAttr) -> (AttrTag, Surface) {
    match a {
        TileAttr::Begin => (AttrTag::Begin, Surface::AttrBegin),
        TileAttr::End => (AttrTag::End, Surface::AttrEnd),
        TileAttr::Index => (AttrTag::Index, Surface::AttrIndex),
        TileAttr::Count => (AttrTag::Count, Surface::AttrCount),
        TileAttr::BlockSize => (AttrTag::BlockSize, Surface::AttrBlockSize),
        TileAttr::Id => (AttrTag::Id, Surface::AttrId),
    }
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
    let mut w = Walker::new(case);
    let mut out = Out::default();
    w.module(&mut out);
    w.body(&case.kernel.body, 0, false, &mut out);
    out.finish()
}

/// The features found so far. A walk inserts a feature per expression node, mostly the same few
/// surface tags; inserting each into a `BTreeSet` (an ordered search of a nested enum) was a
/// quarter of `features` (perf, 2026-11-30), so surfaces go into a table by variant and the rest
/// into a vector, sorted and deduplicated once at the end.
struct Out {
    surfaces: [bool; Surface::ALL.len()],
    rest: Vec<Feature>,
}

impl Default for Out {
    fn default() -> Out {
        Out {
            surfaces: [false; Surface::ALL.len()],
            rest: Vec::new(),
        }
    }
}

impl Out {
    fn insert(&mut self, f: Feature) {
        match f {
            // `Surface::ALL` lists the variants in declaration order: the discriminant is the index.
            Feature::Surface(s) => self.surfaces[s as usize] = true,
            Feature::Index { .. }
            | Feature::NoneAt(_)
            | Feature::NonZeroBegin
            | Feature::NonDividingExtent
            | Feature::DividingExtent
            | Feature::LiveLoop
            | Feature::ShiftedLiveLoop
            | Feature::StaticInnerLoop
            | Feature::LiveBranch
            | Feature::ElseBranch
            | Feature::DirectWrite
            | Feature::AliasWrite
            | Feature::AtomicWrite
            | Feature::WholeBlockConsumer
            | Feature::View(_)
            | Feature::Permute
            | Feature::TileAttrValue(_)
            | Feature::DType(_)
            | Feature::LoopType(_)
            | Feature::GridOverRows
            | Feature::TopLevelTile
            | Feature::LoopDepth(_)
            | Feature::PowerOfTwoRows
            | Feature::RandomValues
            | Feature::ArangeValues
            | Feature::PairedReads
            | Feature::OrderDependentUpdate => self.rest.push(f),
        }
    }

    fn finish(mut self) -> BTreeSet<Feature> {
        self.rest.extend(
            Surface::ALL
                .iter()
                .zip(self.surfaces)
                .filter(|(_, on)| *on)
                .map(|(s, _)| Feature::Surface(*s)),
        );
        // Collecting an unsorted vector into a BTreeSet runs a stable sort with duplicates (13%
        // of `features`, perf 2026-11-30); sorting unstably and deduplicating first is cheaper.
        self.rest.sort_unstable();
        self.rest.dedup();
        self.rest.into_iter().collect()
    }
}

struct Walker<'c> {
    case: &'c Case,
    host: HostEnv,
    effective: Vec<i64>,
    table: BlockTable,
    loop_type: LoopType,
    /// Device names bound to tile loads: (tensor, tiled dim, block id).
    loads: FastMap<&'c str, (&'c str, usize, usize)>,
    /// Device names and the expression they were last bound to.
    bound: FastMap<&'c str, &'c Expr>,
    /// Tile variables and their block ids.
    tiles: FastMap<&'c str, usize>,
    /// Storages loaded anywhere.
    loaded_storages: Vec<usize>,
}

impl<'c> Walker<'c> {
    fn new(case: &'c Case) -> Walker<'c> {
        let host = HostEnv::of(case);
        let table = BlockTable::of(&case.kernel);
        let sizes = case.block_sizes_with(&table, &host, |e| host.eval_int(e));
        let mut loaded_storages = Vec::new();
        lang::ir::walk::each_stmt(&case.kernel.body, &mut |s| {
            lang::ir::walk::stmt_exprs(s, &mut |e| {
                lang::ir::walk::each_expr(e, &mut |x| {
                    if let ExprKind::Load { tensor, .. } = &x.kind
                        && let Some(t) = host.tensors.get(tensor)
                    {
                        loaded_storages.push(t.storage);
                    }
                })
            })
        });
        Walker {
            case,
            effective: sizes.effective,
            table,
            loop_type: case.effective_loop_type(),
            host,
            loads: FastMap::default(),
            bound: FastMap::default(),
            tiles: FastMap::default(),
            loaded_storages,
        }
    }

    fn module(&self, out: &mut Out) {
        let c = self.case;
        out.insert(Feature::LoopType(self.loop_type));
        if c.config.loop_type.is_none() {
            out.insert(Feature::Surface(Surface::ConfigLoopTypeAbsent));
        }
        if c.config.worklist_grouping.is_some() {
            out.insert(Feature::Surface(Surface::ConfigWorklistGrouping));
        }
        if c.config.load_buffer_count.is_some() {
            out.insert(Feature::Surface(Surface::ConfigLoadBufferCount));
        }
        if c.seed.is_some() {
            out.insert(Feature::Surface(Surface::Seed));
        }
        if c.call.result.is_some() {
            out.insert(Feature::Surface(Surface::CallResult));
        }
        for p in &c.kernel.params {
            out.insert(Feature::Surface(match p.kind {
                ParamKind::Tensor => Surface::ParamTensor,
                ParamKind::Int => Surface::ParamInt,
            }));
        }
        for t in self.host.tensors.values() {
            if matches!(t.origin, HostOrigin::Param { .. }) {
                out.insert(Feature::DType(t.dtype));
            }
        }
        for input in &c.inputs {
            let s = match &input.ctor {
                Ctor::Randn { .. } => Surface::CtorRandn,
                Ctor::Rand { .. } => Surface::CtorRand,
                Ctor::Ones { .. } => Surface::CtorOnes,
                Ctor::Zeros { .. } => Surface::CtorZeros,
                Ctor::Full { .. } => Surface::CtorFull,
                Ctor::Arange { .. } => Surface::CtorArange,
                Ctor::Tensor { .. } => Surface::CtorTensor,
                Ctor::Empty { .. } => Surface::CtorEmpty,
            };
            out.insert(Feature::Surface(s));
            match &input.ctor {
                Ctor::Randn { .. } | Ctor::Rand { .. } => {
                    out.insert(Feature::RandomValues);
                }
                Ctor::Arange { .. } => {
                    out.insert(Feature::ArangeValues);
                }
                Ctor::Tensor { values, .. } => {
                    let pow2 = values.iter().all(|&v| v > 0.0 && v.log2().fract() == 0.0);
                    let mut sorted = values.clone();
                    sorted.sort_by(f64::total_cmp);
                    sorted.dedup();
                    if pow2 && sorted.len() == values.len() && values.len() > 1 {
                        out.insert(Feature::PowerOfTwoRows);
                    }
                }
                Ctor::Ones { .. } | Ctor::Zeros { .. } | Ctor::Full { .. } | Ctor::Empty { .. } => {
                }
            }
            for op in &input.chain {
                out.insert(Feature::Surface(match op {
                    InputOp::Reshape(_) => Surface::InputReshape,
                    InputOp::Expand(_) => Surface::InputExpand,
                    InputOp::Contiguous => Surface::InputContiguous,
                    InputOp::To(_) => Surface::InputTo,
                }));
            }
        }
    }

    fn body(&mut self, body: &'c [Stmt], depth: u8, in_branch: bool, out: &mut Out) {
        for s in body {
            self.stmt(s, depth, in_branch, out);
        }
    }

    fn stmt(&mut self, s: &'c Stmt, depth: u8, in_branch: bool, out: &mut Out) {
        let mut surface = |x: Surface| {
            out.insert(Feature::Surface(x));
        };
        match &s.kind {
            StmtKind::Assign { target, value } => {
                surface(Surface::StmtAssign);
                if order_dependent_update(target, value) {
                    out.insert(Feature::OrderDependentUpdate);
                }
                self.expr(value, in_branch, true, out);
                if let ExprKind::Load {
                    tensor, indices, ..
                } = &value.kind
                {
                    let tiled = indices.iter().filter(|i| !matches!(i, Index::NewAxis)).position(
                        |i| matches!(i, Index::Expr(Expr { kind: ExprKind::Name(n), .. }) if self.tiles.contains_key(n.as_str())),
                    );
                    if let Some(dim) = tiled {
                        let bid = indices
                            .iter()
                            .find_map(|i| match i {
                                Index::Expr(Expr {
                                    kind: ExprKind::Name(n),
                                    ..
                                }) => self.tiles.get(n.as_str()).copied(),
                                _ => None,
                            })
                            .unwrap_or(0);
                        self.loads.insert(target, (tensor, dim, bid));
                    }
                } else {
                    self.loads.remove(target.as_str());
                }
                if depth > 0 {
                    self.bound.insert(target, value);
                }
            }
            StmtKind::AugAssign { op, value, .. } => {
                surface(Surface::StmtAugAssign);
                out.insert(Feature::Surface(bin_surface(*op)));
                self.expr(value, in_branch, true, out);
            }
            StmtKind::Store {
                tensor,
                indices,
                value,
                explicit,
            } => {
                surface(if *explicit {
                    Surface::StmtStoreExplicit
                } else {
                    Surface::StmtStore
                });
                self.write(tensor, false, out);
                self.indices(indices, in_branch, out);
                self.expr(value, in_branch, true, out);
            }
            StmtKind::Atomic {
                op,
                tensor,
                indices,
                expected,
                value,
            } => {
                surface(Surface::StmtAtomic);
                out.insert(Feature::Surface(match op {
                    AtomicOp::Add => Surface::AtomicAdd,
                    AtomicOp::And => Surface::AtomicAnd,
                    AtomicOp::Cas => Surface::AtomicCas,
                    AtomicOp::Max => Surface::AtomicMax,
                    AtomicOp::Min => Surface::AtomicMin,
                    AtomicOp::Or => Surface::AtomicOr,
                    AtomicOp::Xchg => Surface::AtomicXchg,
                    AtomicOp::Xor => Surface::AtomicXor,
                }));
                self.write(tensor, true, out);
                self.indices(indices, in_branch, out);
                if let Some(x) = expected {
                    self.expr(x, in_branch, true, out);
                }
                self.expr(value, in_branch, true, out);
            }
            StmtKind::For(lp) => {
                surface(Surface::StmtFor);
                let ids = self.table.loop_ids(lp).to_vec();
                out.insert(Feature::LoopDepth(depth + 1));
                for ((var, dim), bid) in lp.vars.iter().zip(&lp.dims).zip(ids) {
                    if dim.block_size.is_some() {
                        out.insert(Feature::Surface(Surface::LoopFixedBlock));
                    }
                    if let Some(b) = &dim.begin {
                        out.insert(Feature::Surface(Surface::LoopBegin));
                        self.expr(b, in_branch, false, out);
                    }
                    self.expr(&dim.end, in_branch, false, out);
                    match lp.kind {
                        LoopKind::Grid => {
                            out.insert(Feature::Surface(Surface::LoopGrid));
                            if self.host.eval_int(&dim.end).is_some_and(|g| g > 1) {
                                out.insert(Feature::GridOverRows);
                            }
                        }
                        LoopKind::Tile => {
                            out.insert(Feature::Surface(Surface::LoopTile));
                            if depth == 0 {
                                out.insert(Feature::TopLevelTile);
                            }
                            self.tile_loop_features(dim.begin.as_ref(), &dim.end, bid, depth, out);
                            self.tiles.insert(var, bid);
                        }
                    }
                }
                self.body(&lp.body, depth + 1, in_branch, out);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                surface(Surface::StmtIf);
                if !else_body.is_empty() {
                    surface(Surface::StmtIfElse);
                    out.insert(Feature::ElseBranch);
                }
                if let ExprKind::Compare { lhs, rhs, .. } = &cond.kind
                    && (self.is_live(lhs) || self.is_live(rhs))
                {
                    out.insert(Feature::LiveBranch);
                }
                self.expr(cond, in_branch, false, out);
                self.body(then_body, depth, true, out);
                self.body(else_body, depth, true, out);
            }
            StmtKind::Return(values) => {
                surface(Surface::StmtReturn);
                for v in values {
                    self.expr(v, in_branch, false, out);
                }
            }
        }
    }

    fn tile_loop_features(
        &self,
        begin: Option<&Expr>,
        end: &Expr,
        bid: usize,
        depth: u8,
        out: &mut Out,
    ) {
        let b = begin.map_or(Some(0), |b| self.host.eval_int(b));
        if b != Some(0) {
            out.insert(Feature::NonZeroBegin);
        }
        if let (Some(b), Some(e), Some(&block)) =
            (b, self.host.eval_int(end), self.effective.get(bid))
        {
            if block > 0 && e > b {
                out.insert(if (e - b) % block == 0 {
                    Feature::DividingExtent
                } else {
                    Feature::NonDividingExtent
                });
            }
            if depth >= 2 || (depth >= 1 && !self.tiles.is_empty()) {
                out.insert(Feature::StaticInnerLoop);
            }
        }
        if self.is_live(end) {
            out.insert(Feature::LiveLoop);
        } else if let ExprKind::Binary {
            op: BinOp::Sub,
            lhs,
            rhs,
        } = &end.kind
            && self.is_live(lhs)
            && matches!(rhs.kind, ExprKind::Int(_))
        {
            out.insert(Feature::ShiftedLiveLoop);
        }
    }

    /// `t.end - t.begin`, or a name bound to it.
    fn is_live(&self, e: &Expr) -> bool {
        // Names are followed at most once each: `a = a` (or `a = b; b = a`) in a loop body
        // binds a name to itself, which a hand-written case may do.
        let mut e = e;
        for _ in 0..=self.bound.len() {
            match &e.kind {
                ExprKind::Name(n) => match self.bound.get(n.as_str()) {
                    Some(b) => e = b,
                    None => return false,
                },
                _ => return self.is_live_expr(e),
            }
        }
        false
    }

    /// [`Self::is_live`] of an expression that is not a name.
    fn is_live_expr(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Binary {
                op: BinOp::Sub,
                lhs,
                rhs,
            } => matches!(
                (&lhs.kind, &rhs.kind),
                (ExprKind::TileAttr { tile: a, attr: TileAttr::End }, ExprKind::TileAttr { tile: b, attr: TileAttr::Begin }) if a == b
            ),
            _ => false,
        }
    }

    fn write(&self, tensor: &str, atomic: bool, out: &mut Out) {
        let Some(t) = self.host.tensors.get(tensor) else {
            return;
        };
        if !self.loaded_storages.contains(&t.storage) {
            return;
        }
        match t.origin {
            HostOrigin::Alias { .. } => {
                out.insert(Feature::AliasWrite);
            }
            HostOrigin::Param { .. } | HostOrigin::Alloc(_) => {
                out.insert(Feature::DirectWrite);
            }
        }
        if atomic {
            out.insert(Feature::AtomicWrite);
        }
    }

    fn indices(&mut self, indices: &[Index], in_branch: bool, out: &mut Out) {
        for i in indices {
            out.insert(Feature::Surface(index_surface(i)));
        }
        for e in index_exprs(indices) {
            self.expr(e, in_branch, false, out);
        }
    }

    /// Tags `e` and its sub-expressions. `value` says a tile attribute here is used as a value.
    fn expr(&mut self, e: &Expr, in_branch: bool, value: bool, out: &mut Out) {
        out.insert(Feature::Surface(expr_surface(e)));
        match &e.kind {
            ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Float(_) => {}
            ExprKind::Size { value: v, .. } => self.expr(v, in_branch, false, out),
            ExprKind::TileAttr { attr, .. } => {
                let (tag, s) = attr_tag(*attr);
                out.insert(Feature::Surface(s));
                if value && *attr != TileAttr::Index {
                    out.insert(Feature::TileAttrValue(tag));
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                out.insert(Feature::Surface(bin_surface(*op)));
                if *op == BinOp::Mul && self.block_read(lhs) && self.block_read(rhs) {
                    out.insert(Feature::PairedReads);
                }
                // `live = t.end - t.begin` is the loop's extent, not a value.
                let live = self.is_live(e);
                self.whole(lhs, out);
                self.whole(rhs, out);
                self.expr(lhs, in_branch, value && !live, out);
                self.expr(rhs, in_branch, value && !live, out);
            }
            ExprKind::Compare { op, lhs, rhs } => {
                out.insert(Feature::Surface(match op {
                    CmpOp::Ge => Surface::CmpGe,
                    CmpOp::Gt => Surface::CmpGt,
                    CmpOp::Le => Surface::CmpLe,
                    CmpOp::Lt => Surface::CmpLt,
                    CmpOp::Eq => Surface::CmpEq,
                    CmpOp::Ne => Surface::CmpNe,
                }));
                self.expr(lhs, in_branch, false, out);
                self.expr(rhs, in_branch, false, out);
            }
            ExprKind::Load { indices, .. } => self.indices(indices, in_branch, out),
            ExprKind::Subscript { value: v, indices } => {
                self.subscript(v, indices, in_branch, out);
                self.expr(v, in_branch, false, out);
                self.indices(indices, in_branch, out);
            }
            ExprKind::Arange { start, end, step } => {
                for x in [start.as_deref(), Some(&**end), step.as_deref()]
                    .into_iter()
                    .flatten()
                {
                    self.expr(x, in_branch, false, out);
                }
            }
            ExprKind::Zeros { shape, .. } => shape
                .iter()
                .for_each(|d| self.expr(d, in_branch, false, out)),
            ExprKind::Full {
                shape, value: v, ..
            } => {
                shape
                    .iter()
                    .for_each(|d| self.expr(d, in_branch, false, out));
                self.expr(v, in_branch, false, out);
            }
            ExprKind::Cast { value: v, .. } | ExprKind::Sum { value: v, .. } => {
                self.whole(v, out);
                self.expr(v, in_branch, value, out);
            }
            ExprKind::View { value: v, op } => {
                let (kind, s) = match op {
                    ViewOp::Reshape(_) => (ViewKind::Reshape, Surface::ViewReshape),
                    ViewOp::View(_) => (ViewKind::View, Surface::ViewView),
                    ViewOp::Squeeze(_) => (ViewKind::Squeeze, Surface::ViewSqueeze),
                    ViewOp::Unsqueeze(_) => (ViewKind::Unsqueeze, Surface::ViewUnsqueeze),
                    ViewOp::ViewAs(_) => (ViewKind::ViewAs, Surface::ViewViewAs),
                };
                out.insert(Feature::Surface(s));
                out.insert(Feature::View(kind));
                self.expr(v, in_branch, false, out);
                match op {
                    ViewOp::Reshape(d) | ViewOp::View(d) => {
                        d.iter().for_each(|x| self.expr(x, in_branch, false, out))
                    }
                    ViewOp::Squeeze(_) | ViewOp::Unsqueeze(_) => {}
                    ViewOp::ViewAs(o) => self.expr(o, in_branch, false, out),
                }
            }
            ExprKind::Permute { value: v, .. } => {
                out.insert(Feature::Permute);
                self.whole(v, out);
                self.expr(v, in_branch, false, out);
            }
            ExprKind::Alloc { kind, shape, .. } => {
                out.insert(Feature::Surface(match kind {
                    AllocKind::Empty => Surface::AllocEmpty,
                    AllocKind::Zeros => Surface::AllocZeros,
                }));
                match shape {
                    AllocShape::Dims(d) => {
                        out.insert(Feature::Surface(Surface::AllocDims));
                        d.iter().for_each(|x| self.expr(x, in_branch, false, out));
                    }
                    AllocShape::Like(t) => {
                        out.insert(Feature::Surface(Surface::AllocLike));
                        self.expr(t, in_branch, false, out);
                    }
                }
            }
        }
    }

    /// A narrowing read of a loaded block, under casts and sums.
    fn block_read(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Cast { value, .. } | ExprKind::Sum { value, .. } => self.block_read(value),
            ExprKind::Subscript { value, indices } => {
                indices.iter().any(Index::is_narrowing)
                    && matches!(&value.kind, ExprKind::Name(n) if self.loads.contains_key(n.as_str()))
            }
            _ => false,
        }
    }

    /// A loaded block consumed by a non-view operation.
    fn whole(&self, operand: &Expr, out: &mut Out) {
        if let ExprKind::Name(n) = &operand.kind
            && self.loads.contains_key(n.as_str())
        {
            out.insert(Feature::WholeBlockConsumer);
        }
    }

    fn subscript(&self, value: &Expr, indices: &[Index], in_branch: bool, out: &mut Out) {
        let narrowing: Vec<usize> = (0..indices.len())
            .filter(|&k| indices[k].is_narrowing())
            .collect();
        for (pos, i) in indices.iter().enumerate() {
            if matches!(i, Index::NewAxis) {
                out.insert(Feature::NoneAt(pos.min(255) as u8));
            }
        }
        if narrowing.is_empty() {
            out.insert(Feature::View(ViewKind::NoneSubscript));
            return;
        }
        let lt = self.loop_type;
        let mut tag = |form| {
            out.insert(Feature::Index {
                form,
                loop_type: lt,
                in_branch,
            });
        };
        if narrowing.len() > 1 {
            tag(IndexForm::MultipleNarrowing);
        }
        // The extent of the narrowed dim, when the value is a named tile load.
        let extent_of = |pos: usize| -> Option<i64> {
            let ExprKind::Name(n) = &value.kind else {
                return None;
            };
            let (tensor, tiled, bid) = self.loads.get(n.as_str())?;
            let dim = indices[..pos]
                .iter()
                .filter(|i| !matches!(i, Index::NewAxis))
                .count();
            if dim == *tiled {
                self.effective.get(*bid).copied()
            } else {
                self.host
                    .tensors
                    .get(*tensor)?
                    .shape
                    .get(dim)
                    .map(|&d| d as i64)
            }
        };
        for &k in &narrowing {
            let form = match &indices[k] {
                Index::Int(v) => {
                    if *v < 0 {
                        IndexForm::NegativeInt
                    } else {
                        IndexForm::Int
                    }
                }
                Index::Slice { start, stop, step } => {
                    self.slice_form(start, stop, step, extent_of(k))
                }
                Index::Expr(x) => self.expr_form(x, false),
                Index::Full | Index::NewAxis => continue,
            };
            tag(form);
            if let Index::Expr(
                x @ Expr {
                    kind: ExprKind::Name(_),
                    ..
                },
            ) = &indices[k]
            {
                tag(self.expr_form(x, true));
            }
        }
    }

    fn slice_form(
        &self,
        start: &Option<Expr>,
        stop: &Option<Expr>,
        step: &Option<Expr>,
        extent: Option<i64>,
    ) -> IndexForm {
        let lit = |e: &Option<Expr>| {
            e.as_ref().and_then(|x| match x.kind {
                ExprKind::Int(v) => Some(v),
                _ => None,
            })
        };
        if step.is_some() {
            return IndexForm::SteppedSlice;
        }
        if start.is_none() || stop.is_none() {
            return IndexForm::OpenSlice;
        }
        match (lit(start), lit(stop)) {
            (Some(a), Some(b)) => {
                if a < 0 || b < 0 {
                    IndexForm::NegativeSlice
                } else if b <= a {
                    IndexForm::EmptySlice
                } else if extent.is_some_and(|x| b > x) {
                    IndexForm::PastExtentSlice
                } else {
                    IndexForm::StaticSlice
                }
            }
            _ => {
                let (Some(a), Some(b)) = (start, stop) else {
                    return IndexForm::DynamicSlice;
                };
                match &a.kind {
                    ExprKind::Binary {
                        op: BinOp::Sub,
                        lhs,
                        ..
                    } if self.same(lhs, b) && self.is_live(b) => IndexForm::TailSlice,
                    _ => IndexForm::DynamicSlice,
                }
            }
        }
    }

    fn same(&self, a: &Expr, b: &Expr) -> bool {
        a.without_spans_eq(b)
    }

    /// The form of an expression index; with `resolve`, a name is looked through.
    fn expr_form(&self, x: &Expr, resolve: bool) -> IndexForm {
        match &x.kind {
            ExprKind::TileAttr {
                attr: TileAttr::Index,
                ..
            } => IndexForm::TileIndex,
            ExprKind::TileAttr {
                attr: TileAttr::Begin,
                ..
            } => IndexForm::TileBegin,
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } => match (&lhs.kind, &rhs.kind) {
                (
                    ExprKind::TileAttr {
                        attr: TileAttr::Index,
                        ..
                    },
                    ExprKind::Int(_),
                ) => IndexForm::TileIndexOffset,
                (ExprKind::Int(_), ExprKind::Arange { .. }) => IndexForm::OffsetArange,
                _ => IndexForm::OtherExpr,
            },
            ExprKind::Arange { start, end, step } => {
                let step_lit = step
                    .as_deref()
                    .map(|s| matches!(s.kind, ExprKind::Int(v) if v > 1));
                if step_lit == Some(true) {
                    IndexForm::StridedArange
                } else if self.is_live(end)
                    && start.as_deref().is_some_and(|s| matches!(&s.kind, ExprKind::Binary { op: BinOp::Sub, lhs, .. } if self.same(lhs, end)))
                {
                    IndexForm::TailArange
                } else {
                    IndexForm::StaticArange
                }
            }
            ExprKind::Name(n) if resolve => match self.bound.get(n.as_str()) {
                Some(b) => self.expr_form(b, false),
                None => IndexForm::OtherExpr,
            },
            ExprKind::Name(_) => IndexForm::NamedIndex,
            _ => IndexForm::OtherExpr,
        }
    }
}

trait SpanFreeEq {
    fn without_spans_eq(&self, other: &Expr) -> bool;
}

impl SpanFreeEq for Expr {
    fn without_spans_eq(&self, other: &Expr) -> bool {
        // Spans differ between two occurrences of the same name; compare the rendered forms.
        lang::render::expr(self) == lang::render::expr(other)
    }
}

fn bin_surface(op: BinOp) -> Surface {
    match op {
        BinOp::Add => Surface::BinAdd,
        BinOp::Sub => Surface::BinSub,
        BinOp::Mul => Surface::BinMul,
        BinOp::Div => Surface::BinDiv,
        BinOp::FloorDiv => Surface::BinFloorDiv,
    }
}

fn expr_surface(e: &Expr) -> Surface {
    match &e.kind {
        ExprKind::Name(_) => Surface::ExprName,
        ExprKind::Int(_) => Surface::ExprInt,
        ExprKind::Float(_) => Surface::ExprFloat,
        ExprKind::Size { .. } => Surface::ExprSize,
        ExprKind::TileAttr { .. } => Surface::ExprTileAttr,
        ExprKind::Binary { .. } => Surface::ExprBinary,
        ExprKind::Compare { .. } => Surface::ExprCompare,
        ExprKind::Load {
            explicit: false, ..
        } => Surface::ExprLoad,
        ExprKind::Load { explicit: true, .. } => Surface::ExprLoadExplicit,
        ExprKind::Subscript { .. } => Surface::ExprSubscript,
        ExprKind::Arange { .. } => Surface::ExprArange,
        ExprKind::Zeros { .. } => Surface::ExprZeros,
        ExprKind::Full { .. } => Surface::ExprFull,
        ExprKind::Cast { .. } => Surface::ExprCast,
        ExprKind::Sum { .. } => Surface::ExprSum,
        ExprKind::View { .. } => Surface::ExprView,
        ExprKind::Permute { .. } => Surface::ExprPermute,
        ExprKind::Alloc { .. } => Surface::ExprAlloc,
    }
}

fn index_surface(i: &Index) -> Surface {
    match i {
        Index::Full => Surface::IndexFull,
        Index::NewAxis => Surface::IndexNewAxis,
        Index::Int(_) => Surface::IndexInt,
        Index::Slice { .. } => Surface::IndexSlice,
        Index::Expr(_) => Surface::IndexExpr,
    }
}

fn index_exprs(indices: &[Index]) -> Vec<&Expr> {
    let mut out = Vec::new();
    for i in indices {
        match i {
            Index::Full | Index::NewAxis | Index::Int(_) => {}
            Index::Slice { start, stop, step } => {
                out.extend([start, stop, step].into_iter().flatten())
            }
            Index::Expr(e) => out.push(e),
        }
    }
    out
}

/// `target = target * c + v` (either operand order of the `+`) or `target = v - target`.
fn order_dependent_update(target: &str, value: &Expr) -> bool {
    let is_target = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == target);
    let scaled = |e: &Expr| {
        matches!(&e.kind, ExprKind::Binary { op: BinOp::Mul, lhs, rhs }
            if is_target(lhs) || is_target(rhs))
    };
    match &value.kind {
        ExprKind::Binary {
            op: BinOp::Add,
            lhs,
            rhs,
        } => scaled(lhs) || scaled(rhs),
        ExprKind::Binary {
            op: BinOp::Sub,
            lhs,
            rhs,
        } => is_target(rhs) && !is_target(lhs),
        _ => false,
    }
}
