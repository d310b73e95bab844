//! The walk over a case: the features found so far ([`Out`]), what the walker knows at each
//! statement ([`Walker`]: the host tensors and their storages, the effective blocks, which
//! device names hold tile loads, what each name was last bound to, the tile variables), the
//! module-level tags (config, seed, call, parameters, inputs), and the statements: loops (depth,
//! begins, extents the block does or does not divide, loops over the live extent), branches on
//! the live extent, writes to a loaded tensor, and order-dependent accumulator updates.

use super::exprs::bin_surface;
use super::{Feature, Surface};
use lang::ir::blocks::BlockTable;
use lang::ir::hash::FastMap;
use lang::ir::scope::{HostEnv, HostOrigin};
use lang::ir::{
    AtomicOp, BinOp, Case, Ctor, Expr, ExprKind, Index, InputOp, LoopKind, LoopType, ParamKind,
    Stmt, StmtKind, TileAttr,
};
use std::collections::BTreeSet;

/// The features found so far. A walk inserts a feature per expression node, mostly the same few
/// surface tags; inserting each into a `BTreeSet` (an ordered search of a nested enum) was a
/// quarter of `features` (perf, 2026-11-30), so surfaces go into a table by variant and the rest
/// into a vector, sorted and deduplicated once at the end.
pub(super) struct Out {
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
    pub(super) fn insert(&mut self, f: Feature) {
        match f {
            // `Surface::ALL` lists the variants in declaration order: the discriminant is the index.
            Feature::Surface(s) => self.surfaces[s as usize] = true,
            Feature::Index { .. }
            | Feature::NoneAt(_)
            | Feature::NonZeroBegin
            | Feature::NonDividingExtent
            | Feature::DividingExtent
            | Feature::ExtentOneAboveBlock
            | Feature::ExtentOneBelowBlock
            | Feature::SingleRowInput
            | Feature::EmptyInput
            | Feature::LiveLoop
            | Feature::ShiftedLiveLoop
            | Feature::TileBeginLoop
            | Feature::Gather
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
            | Feature::OrderDependentUpdate
            | Feature::TorchOp(_) => self.rest.push(f),
        }
    }

    pub(super) fn finish(mut self) -> BTreeSet<Feature> {
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

/// What the walk knows at a statement (see the module docs).
pub(super) struct Walker<'c> {
    case: &'c Case,
    pub(super) host: HostEnv,
    pub(super) effective: Vec<i64>,
    table: BlockTable,
    pub(super) loop_type: LoopType,
    /// Device names bound to tile loads: (tensor, tiled dim, block id).
    pub(super) loads: FastMap<&'c str, (&'c str, usize, usize)>,
    /// Device names and the expression they were last bound to.
    pub(super) bound: FastMap<&'c str, &'c Expr>,
    /// Tile variables and their block ids.
    tiles: FastMap<&'c str, usize>,
    /// Storages loaded anywhere.
    loaded_storages: Vec<usize>,
}

impl<'c> Walker<'c> {
    /// The walker of `case`, whose effective block sizes are `effective` when known (the
    /// compile's), else computed here.
    pub(super) fn new(case: &'c Case, effective: Option<&[i64]>) -> Walker<'c> {
        let host = HostEnv::of(case);
        let table = BlockTable::of(&case.kernel);
        let effective = match effective {
            Some(e) => e.to_vec(),
            None => {
                case.block_sizes_with(&table, &host, |e| host.eval_int(e))
                    .effective
            }
        };
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
            effective,
            table,
            loop_type: case.effective_loop_type(),
            host,
            loads: FastMap::default(),
            bound: FastMap::default(),
            tiles: FastMap::default(),
            loaded_storages,
        }
    }

    pub(super) fn module(&self, out: &mut Out) {
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
                ParamKind::Float => Surface::ParamFloat,
                ParamKind::Bool => Surface::ParamBool,
            }));
        }
        for t in self.host.tensors.values() {
            if matches!(t.origin, HostOrigin::Param { .. }) {
                out.insert(Feature::DType(t.dtype));
                match t.shape.first() {
                    Some(1) => out.insert(Feature::SingleRowInput),
                    Some(0) => out.insert(Feature::EmptyInput),
                    _ => {}
                }
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
                Ctor::Range { .. } => Surface::CtorRange,
                Ctor::Eye { .. } => Surface::CtorEye,
                Ctor::Randint { .. } => Surface::CtorRandint,
                Ctor::Tensor { .. } => Surface::CtorTensor,
                Ctor::Empty { .. } => Surface::CtorEmpty,
            };
            out.insert(Feature::Surface(s));
            match &input.ctor {
                Ctor::Randn { .. } | Ctor::Rand { .. } | Ctor::Randint { .. } => {
                    out.insert(Feature::RandomValues);
                }
                Ctor::Arange { .. } | Ctor::Range { .. } => {
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
                Ctor::Ones { .. }
                | Ctor::Zeros { .. }
                | Ctor::Full { .. }
                | Ctor::Eye { .. }
                | Ctor::Empty { .. } => {}
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

    pub(super) fn body(&mut self, body: &'c [Stmt], depth: u8, in_branch: bool, out: &mut Out) {
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
                            .find_map(|i| {
                                let Index::Expr(Expr {
                                    kind: ExprKind::Name(n),
                                    ..
                                }) = i
                                else {
                                    return None;
                                };
                                self.tiles.get(n.as_str()).copied()
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
        if begin.is_some_and(|b| {
            matches!(
                b.kind,
                ExprKind::TileAttr {
                    attr: TileAttr::Begin,
                    ..
                }
            )
        }) {
            out.insert(Feature::TileBeginLoop);
        }
        if let (Some(b), Some(e), Some(&block)) =
            (b, self.host.eval_int(end), self.effective.get(bid))
        {
            if block > 0 && e > b {
                let rem = (e - b) % block;
                out.insert(if rem == 0 {
                    Feature::DividingExtent
                } else {
                    Feature::NonDividingExtent
                });
                if block >= 2 && rem == 1 {
                    out.insert(Feature::ExtentOneAboveBlock);
                }
                if block >= 2 && rem == block - 1 {
                    out.insert(Feature::ExtentOneBelowBlock);
                }
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
    pub(super) fn is_live(&self, e: &Expr) -> bool {
        // Names are followed at most once each: `a = a` (or `a = b; b = a`) in a loop body
        // binds a name to itself, which a hand-written case may do.
        let mut e = e;
        for _ in 0..=self.bound.len() {
            let ExprKind::Name(n) = &e.kind else {
                return self.is_live_expr(e);
            };
            let Some(b) = self.bound.get(n.as_str()) else {
                return false;
            };
            e = b;
        }
        false
    }

    /// [`Self::is_live`] of an expression that is not a name.
    fn is_live_expr(&self, e: &Expr) -> bool {
        let ExprKind::Binary {
            op: BinOp::Sub,
            lhs,
            rhs,
        } = &e.kind
        else {
            return false;
        };
        matches!(
            (&lhs.kind, &rhs.kind),
            (ExprKind::TileAttr { tile: a, attr: TileAttr::End }, ExprKind::TileAttr { tile: b, attr: TileAttr::Begin }) if a == b
        )
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
}

/// `target = target * c + v` (either operand order of the `+`) or `target = v - target`.
fn order_dependent_update(target: &str, value: &Expr) -> bool {
    let is_target = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == target);
    let scaled = |e: &Expr| {
        matches!(&e.kind, ExprKind::Binary { op: BinOp::Mul, lhs, rhs }
            if is_target(lhs) || is_target(rhs))
    };
    let ExprKind::Binary { op, lhs, rhs } = &value.kind else {
        return false;
    };
    match op {
        BinOp::Add => scaled(lhs) || scaled(rhs),
        BinOp::Sub => is_target(rhs) && !is_target(lhs),
        BinOp::Mul | BinOp::Div | BinOp::FloorDiv => false,
    }
}
