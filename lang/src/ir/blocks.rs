//! Block ids: which loop dimension has which id, where its block size comes from, and the
//! effective block sizes after Helion 1.5.1's normalization (`adjust_block_size_constraints`
//! and `BlockSizeSpec._normalize`; deltas D-1.5.1-07 and D-1.5.1-08, which replace spec §1.1a).
//!
//! Helion registers one block id per `hl.tile`/`hl.grid` dimension in program order (a
//! pre-order walk of the kernel body). Tile dimensions without `block_size=` are
//! *config-driven*: `Config::block_sizes[k]` belongs to the k-th of them.

use super::scope::HostEnv;
use super::sym::BlockId;
use super::{Case, Expr, ExprKind, Index, Kernel, Loop, LoopKind, Stmt, StmtKind};
use crate::ir::hash::FastMap;
use std::ops::Range;

/// Where a block id's size comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockSource {
    /// `hl.grid`: one index per step.
    Grid,
    /// `hl.tile(..., block_size=<expr>)`.
    Fixed(Expr),
    /// `hl.tile(...)` without `block_size=`: entry `k` of `Config::block_sizes`.
    Config(usize),
}

/// One registered block id.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockInfo {
    /// The id.
    pub id: BlockId,
    /// The loop variable bound to it.
    pub var: String,
    /// Where its size comes from.
    pub source: BlockSource,
    /// Nesting depth of its loop (0 = outermost, the launch grid).
    pub depth: usize,
}

/// All block ids of a kernel in registration order.
#[derive(Clone, Debug, Default)]
pub struct BlockTable {
    /// Indexed by block id.
    pub blocks: Vec<BlockInfo>,
    /// Every block id in order (`ids[k] == k`): a loop's ids are a slice of it.
    ids: Vec<BlockId>,
    /// Each loop's address and the range of its ids, in registration order. A kernel has a
    /// handful of loops, so a scan finds one; a hashed vector of ids per loop was a fifth of
    /// `BlockTable::of` (callgrind, 2,000 cases).
    loops: Vec<(usize, Range<usize>)>,
}

impl BlockTable {
    /// Registers the block ids of `kernel` (pre-order over loops, one per dimension).
    pub fn of(kernel: &Kernel) -> BlockTable {
        let mut table = BlockTable::default();
        let mut config_slots = 0;
        table.walk(&kernel.body, 0, &mut config_slots);
        table
    }

    fn walk(&mut self, body: &[Stmt], depth: usize, config_slots: &mut usize) {
        for stmt in body {
            match &stmt.kind {
                StmtKind::For(lp) => {
                    let first = self.blocks.len();
                    for (var, dim) in lp.vars.iter().zip(&lp.dims) {
                        let source = match (lp.kind, &dim.block_size) {
                            (LoopKind::Grid, _) => BlockSource::Grid,
                            (LoopKind::Tile, Some(e)) => BlockSource::Fixed(e.clone()),
                            (LoopKind::Tile, None) => {
                                *config_slots += 1;
                                BlockSource::Config(*config_slots - 1)
                            }
                        };
                        let id = self.blocks.len();
                        self.blocks.push(BlockInfo {
                            id,
                            var: var.clone(),
                            source,
                            depth,
                        });
                        self.ids.push(id);
                    }
                    let ids = first..self.blocks.len();
                    self.loops.push((lp as *const Loop as usize, ids));
                    self.walk(&lp.body, depth + 1, config_slots);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.walk(then_body, depth, config_slots);
                    self.walk(else_body, depth, config_slots);
                }
                StmtKind::Assign { .. }
                | StmtKind::AugAssign { .. }
                | StmtKind::Store { .. }
                | StmtKind::Atomic { .. }
                | StmtKind::Return(_) => {}
            }
        }
    }

    /// The block ids of a loop of the kernel this table was built from (same allocation).
    pub fn loop_ids(&self, lp: &Loop) -> &[BlockId] {
        let at = lp as *const Loop as usize;
        self.loops
            .iter()
            .find(|(l, _)| *l == at)
            .map_or(&[], |(_, ids)| &self.ids[ids.clone()])
    }

    /// How many block ids take their size from the config.
    pub fn config_count(&self) -> usize {
        self.blocks
            .iter()
            .filter(|b| matches!(b.source, BlockSource::Config(_)))
            .count()
    }
}

/// TPU alignment a block must meet on dimension `dim` of a rank-`rank` tensor of `bitwidth`
/// bits (spec §1.1a, Helion `adjust_block_size_constraints` / `_get_pallas_required_alignment`):
/// the last dim of a 1-D tensor `128 * 32 / bitwidth`, the last dim of a 2-D+ tensor 128, the
/// second-to-last 8, others 1.
pub fn required_alignment(rank: usize, dim: usize, bitwidth: u32) -> i64 {
    if rank == 1 {
        i64::from(128 * 32 / bitwidth)
    } else if dim + 1 == rank {
        128
    } else if dim + 2 == rank {
        8
    } else {
        1
    }
}

/// The smallest block Helion accepts on a dim of `extent` with alignment `align`: the alignment,
/// or `next_power_of_2(extent)` when the dim is smaller than it.
pub fn minimum_block(extent: i64, align: i64) -> i64 {
    if extent < align {
        (extent.max(1) as u64).next_power_of_two() as i64
    } else {
        align
    }
}

/// Block sizes per block id: configured and effective (after alignment raising).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSizes {
    /// As written: config entry, `block_size=` value, or 1 for grids.
    pub configured: Vec<i64>,
    /// As Helion uses them: raised to the TPU minimum of every tensor dim the tile indexes.
    pub effective: Vec<i64>,
    /// The hint of each block's loop extent (D-1.5.1-07: its static value, an `int`
    /// argument's value, [`DATA_DEPENDENT_EXTENT_HINT`] when data-dependent; 1 for grids).
    pub extent_hint: Vec<i64>,
}

impl Case {
    /// The loop lowering in effect: the config's `pallas_loop_type`, or, when the key is
    /// absent, Helion 1.5.1's default (`ConfigSpec.normalize`, D-1.5.1-10): `fori_loop` when an
    /// inner loop (below the outermost device loop) has a bound that is not static (a device
    /// value such as `live`, an `int` argument, which 1.5.1 passes as a runtime scalar, a tile
    /// attribute), else `emit_pipeline`. Never `unroll` by default.
    pub fn effective_loop_type(&self) -> super::LoopType {
        if let Some(l) = self.config.loop_type {
            return l;
        }
        if has_symbolic_inner_bounds(&self.kernel) {
            super::LoopType::ForiLoop
        } else {
            super::LoopType::EmitPipeline
        }
    }
}

impl Case {
    /// Whether a device loop runs below the launch grid (`has_pallas_inner_loops`, set by
    /// `hl.tile`/`hl.grid` inside another loop).
    pub fn has_inner_loops(&self) -> bool {
        fn any(body: &[Stmt], nested: bool) -> bool {
            body.iter().any(|s| match &s.kind {
                StmtKind::For(lp) => nested || any(&lp.body, true),
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => any(then_body, nested) || any(else_body, nested),
                StmtKind::Assign { .. }
                | StmtKind::AugAssign { .. }
                | StmtKind::Store { .. }
                | StmtKind::Atomic { .. }
                | StmtKind::Return(_) => false,
            })
        }
        any(&self.kernel.body, false)
    }

    /// The number of `torch.Tensor` parameters (`LiftTensorArgs(params)`): the length
    /// `pallas_load_buffer_count` must have (D-1.5.1-11).
    pub fn tensor_param_count(&self) -> usize {
        self.kernel
            .params
            .iter()
            .filter(|p| p.kind == super::ParamKind::Tensor)
            .count()
    }
}

/// Whether a loop nested in a device loop has a begin or end that is not static: built from int
/// literals, `t.size(d)` of a host tensor, and host names bound to such (D-1.5.1-10).
fn has_symbolic_inner_bounds(kernel: &Kernel) -> bool {
    let mut host: FastMap<&str, &Expr> = FastMap::default();
    for s in &kernel.body {
        if let StmtKind::Assign { target, value } = &s.kind {
            host.entry(target.as_str()).or_insert(value);
        }
    }
    fn is_static(e: &Expr, host: &FastMap<&str, &Expr>, depth: usize) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Size { .. } => true,
            ExprKind::Binary { lhs, rhs, .. } => {
                is_static(lhs, host, depth) && is_static(rhs, host, depth)
            }
            ExprKind::Name(n) if depth < 8 => host
                .get(n.as_str())
                .is_some_and(|v| is_static(v, host, depth + 1)),
            ExprKind::Name(_)
            | ExprKind::Float(_)
            | ExprKind::TileAttr { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Load { .. }
            | ExprKind::Subscript { .. }
            | ExprKind::Arange { .. }
            | ExprKind::Zeros { .. }
            | ExprKind::Full { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Sum { .. }
            | ExprKind::View { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Op { .. }
            | ExprKind::Alloc { .. } => false,
        }
    }
    fn inner(body: &[Stmt], nested: bool, host: &FastMap<&str, &Expr>) -> bool {
        body.iter().any(|s| match &s.kind {
            StmtKind::For(lp) => {
                let symbolic = nested
                    && lp.dims.iter().any(|d| {
                        !is_static(&d.end, host, 0)
                            || d.begin.as_ref().is_some_and(|b| !is_static(b, host, 0))
                    });
                symbolic || inner(&lp.body, true, host)
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => inner(then_body, nested, host) || inner(else_body, nested, host),
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::Return(_) => false,
        })
    }
    inner(&kernel.body, false, &host)
}

/// The size hint Helion gives a data-dependent loop extent (`hl.tile(live)`): D-1.5.1-07.
pub const DATA_DEPENDENT_EXTENT_HINT: i64 = 8192;

impl Case {
    /// The configured and effective block size of every block id. `fixed` evaluates a
    /// `block_size=` expression (int literals or int parameters); `None` means unknown and is
    /// reported as 0 (the frontend refuses such cases before anyone asks).
    pub fn block_sizes(&self, fixed: impl Fn(&Expr) -> Option<i64>) -> BlockSizes {
        let table = BlockTable::of(&self.kernel);
        let host = HostEnv::of(self);
        self.block_sizes_with(&table, &host, fixed)
    }

    /// [`Case::block_sizes`] given the case's block table (`BlockTable::of(&case.kernel)`) and
    /// host environment (`HostEnv::of(case)`), for a caller that has built them already: each
    /// costs a walk and a few allocations per name, and the in-process campaign built each of
    /// them three to five times per case (perf, 2026-11-30: `HostEnv::of` 3.9% and
    /// `block_sizes` 3.7% of the campaign's samples).
    ///
    /// Helion 1.5.1 raises only *config-driven* blocks, and only to
    /// `min(requirement, next_power_of_2(extent hint))` (D-1.5.1-07): the requirement is the
    /// largest TPU alignment of a tensor dim the tile indexes bare (`x[tile, :]`), at least 2
    /// when the kernel uses `tile.index` (a `[block]` device tensor, D-1.5.1-08) or loads a value
    /// whose shape multiplies out to the block (`x[tile, :]` of an `(n, 1)` tensor), and the hint
    /// is the loop's static extent, [`DATA_DEPENDENT_EXTENT_HINT`] for a data-dependent one.
    /// A minimum then propagates to the config-driven loop bounding this one (`hl.tile(live)`
    /// with `live = outer.end - outer.begin`, or `hl.tile(outer.block_size)`), one pass in
    /// registration order; then such a bounded block is lowered to its outer block's size, and
    /// a loop of extent 1 has block 1. A fixed `block_size=` is used as written.
    pub fn block_sizes_with(
        &self,
        table: &BlockTable,
        host: &HostEnv,
        fixed: impl Fn(&Expr) -> Option<i64>,
    ) -> BlockSizes {
        let configured: Vec<i64> = table
            .blocks
            .iter()
            .map(|b| match &b.source {
                BlockSource::Grid => 1,
                BlockSource::Fixed(e) => fixed(e).unwrap_or(0),
                BlockSource::Config(k) => self.config.block_sizes.get(*k).copied().unwrap_or(0),
            })
            .collect();
        let n = table.blocks.len();
        // One walk gives both the loop facts and the TPU requirement of every block id (two
        // walks, `loop_facts` and `visit_tile_indexed_dims`, each with its own tile map, were
        // 2.9% of the campaign; callgrind, 2,000 cases).
        let KernelFacts { loops, requirement } = KernelFacts::of(&self.kernel, table, host);
        let mut minimum: Vec<i64> = (0..n)
            .map(|bid| {
                let hint = loops.extent_hint.get(bid).copied().flatten();
                let hint = hint.unwrap_or(DATA_DEPENDENT_EXTENT_HINT).max(1);
                requirement[bid].min((hint as u64).next_power_of_two() as i64)
            })
            .collect();
        let is_config = |bid: usize| matches!(table.blocks[bid].source, BlockSource::Config(_));
        for bid in 0..n {
            if let Some(outer) = loops.bounded_by.get(bid).copied().flatten()
                && is_config(bid)
                && is_config(outer)
            {
                minimum[outer] = minimum[outer].max(minimum[bid]);
            }
        }
        let mut effective: Vec<i64> = (0..n)
            .map(|bid| {
                if is_config(bid) && configured[bid] > 0 {
                    configured[bid].max(minimum[bid])
                } else {
                    configured[bid]
                }
            })
            .collect();
        // `ConfigSpec.normalize`, after the minimums: a config block bounded by a config-driven
        // outer block is lowered to the outer's size (the inner extent can never exceed it;
        // measured: `block_sizes=[4, 8]` with `hl.tile(live)` runs inner tiles of 4).
        for bid in 0..n {
            if let Some(outer) = loops.bounded_by.get(bid).copied().flatten()
                && is_config(bid)
                && is_config(outer)
                && effective[outer] > 0
                && effective[bid] > effective[outer]
            {
                effective[bid] = effective[outer];
            }
        }
        // `LoopSpecBlockSizeSource.from_config`: a config-driven loop whose extent is known
        // equal to 1 has block 1, whatever the config says (measured: 1.5.1 sized
        // `hl.tile(6, 7)` under `block_sizes=[16]` as 1).
        for (bid, e) in effective.iter_mut().enumerate() {
            if is_config(bid) && loops.extent_static.get(bid).copied().flatten() == Some(1) {
                *e = 1;
            }
        }
        let extent_hint = (0..n)
            .map(|bid| {
                loops
                    .extent_hint
                    .get(bid)
                    .copied()
                    .flatten()
                    .unwrap_or(DATA_DEPENDENT_EXTENT_HINT)
            })
            .collect();
        BlockSizes {
            configured,
            effective,
            extent_hint,
        }
    }
}

/// What the normalization needs to know about each block id's loop.
struct LoopFacts {
    /// The loop extent's value (`end - begin`) as a hint: an `int` argument counts with its
    /// value.
    extent_hint: Vec<Option<i64>>,
    /// The loop extent when it is a compile-time constant: `int` arguments are runtime
    /// scalars (D-1.5.1-14), never `known_equal` to a number.
    extent_static: Vec<Option<i64>>,
    /// The enclosing block whose live extent (`outer.end - outer.begin`, possibly through a
    /// name) or block size bounds this loop.
    bounded_by: Vec<Option<BlockId>>,
}

/// What one walk of the kernel tells the normalization: each block id's loop, and each block
/// id's requirement before the extent hint caps it.
struct KernelFacts {
    /// Per block id.
    loops: LoopFacts,
    /// Per block id: the largest TPU alignment of a tensor dim its tile indexes bare
    /// (`x[tile, :]`), at least 2 where the kernel uses `tile.index` or loads a value whose
    /// shape multiplies out to the block (D-1.5.1-08), 1 otherwise. Dead statements count, as
    /// Helion registers every traced tensor before dead-code elimination.
    requirement: Vec<i64>,
}

impl KernelFacts {
    fn of(kernel: &Kernel, table: &BlockTable, host: &HostEnv) -> KernelFacts {
        let n = table.blocks.len();
        // Every assignment in program order, borrowed from the kernel (copying every assigned
        // expression was half of this walk, perf 2026-12-04): a name resolves to its first
        // one. Only a loop bound that is a name is looked up, so a scan at lookup costs less
        // than hashing every assignment (a map was 0.9% of the campaign; callgrind, 2,000
        // cases).
        let mut bound: Vec<(&str, &Expr)> = Vec::new();
        super::walk::each_stmt(&kernel.body, &mut |s| {
            if let StmtKind::Assign { target, value } = &s.kind {
                bound.push((target, value));
            }
        });
        let mut walk = FactsWalk {
            table,
            host,
            bound,
            tiles: Vec::new(),
            facts: KernelFacts {
                loops: LoopFacts {
                    extent_hint: vec![None; n],
                    extent_static: vec![None; n],
                    bounded_by: vec![None; n],
                },
                requirement: vec![1; n],
            },
        };
        walk.body(&kernel.body);
        walk.facts
    }
}

/// The walk behind [`KernelFacts::of`].
struct FactsWalk<'k> {
    table: &'k BlockTable,
    host: &'k HostEnv,
    bound: Vec<(&'k str, &'k Expr)>,
    /// The tile variables in scope and their block ids, innermost last: a later binding of a
    /// name shadows an earlier one, and a loop's bindings go when its body is done (a stack,
    /// where a copied map of owned names per loop was a fifth of this walk).
    tiles: Vec<(&'k str, BlockId)>,
    facts: KernelFacts,
}

impl<'k> FactsWalk<'k> {
    fn body(&mut self, body: &'k [Stmt]) {
        for stmt in body {
            match &stmt.kind {
                StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } => {
                    self.expr(value, true)
                }
                // The indexed dims of a store's or an atomic's target count; the loads inside
                // its index entries do not (only their `tile.index` uses do).
                StmtKind::Store {
                    tensor,
                    indices,
                    value,
                    ..
                } => {
                    self.index_exprs(indices);
                    self.expr(value, true);
                    require_indexed(
                        self.host,
                        &self.tiles,
                        &mut self.facts.requirement,
                        tensor,
                        indices,
                        false,
                    );
                }
                StmtKind::Atomic {
                    tensor,
                    indices,
                    expected,
                    value,
                    ..
                } => {
                    self.index_exprs(indices);
                    if let Some(x) = expected {
                        self.expr(x, true);
                    }
                    self.expr(value, true);
                    require_indexed(
                        self.host,
                        &self.tiles,
                        &mut self.facts.requirement,
                        tensor,
                        indices,
                        false,
                    );
                }
                StmtKind::For(lp) => {
                    // Loop bounds: `tile.index` uses count, loads do not.
                    for d in &lp.dims {
                        if let Some(b) = &d.begin {
                            self.expr(b, false);
                        }
                        self.expr(&d.end, false);
                        if let Some(b) = &d.block_size {
                            self.expr(b, false);
                        }
                    }
                    let mark = self.tiles.len();
                    for ((var, dim), &id) in
                        lp.vars.iter().zip(&lp.dims).zip(self.table.loop_ids(lp))
                    {
                        self.loop_dim(dim, id);
                        if lp.kind == LoopKind::Tile {
                            self.tiles.push((var.as_str(), id));
                        }
                    }
                    self.body(&lp.body);
                    self.tiles.truncate(mark);
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    self.expr(cond, true);
                    self.body(then_body);
                    self.body(else_body);
                }
                StmtKind::Return(values) => {
                    for v in values {
                        self.expr(v, true);
                    }
                }
            }
        }
    }

    /// The facts of loop dimension `dim`, block id `id` (the tiles of the dims before it are
    /// in scope).
    fn loop_dim(&mut self, dim: &'k super::LoopDim, id: BlockId) {
        let host = self.host;
        let facts = &mut self.facts.loops;
        let begin = match &dim.begin {
            Some(b) => host.eval_int(b),
            None => Some(0),
        };
        facts.extent_hint[id] = begin
            .zip(host.eval_int(&dim.end))
            .map(|(b, e)| e.saturating_sub(b));
        let runtime =
            host.is_runtime(&dim.end) || dim.begin.as_ref().is_some_and(|b| host.is_runtime(b));
        facts.extent_static[id] = facts.extent_hint[id].filter(|_| !runtime);
        // `_detect_outer_block_bound` of the extent `end - begin`: `hl.tile(live)`,
        // `hl.tile(outer.block_size)`, or `hl.tile(outer.begin, outer.end)`.
        let bounding = match &dim.begin {
            None => bounding_tile(&dim.end, &self.bound),
            Some(b) => begin_end_tile(b, &dim.end, &self.bound),
        };
        if let Some(outer) = bounding {
            facts.bounded_by[id] = tile_named(&self.tiles, outer);
        }
    }

    /// The expressions inside index entries (a store's or an atomic's target), for their
    /// `tile.index` uses.
    fn index_exprs(&mut self, indices: &'k [Index]) {
        for index in indices {
            match index {
                Index::Full | Index::NewAxis | Index::Int(_) => {}
                Index::Slice { start, stop, step } => {
                    for e in [start, stop, step].into_iter().flatten() {
                        self.expr(e, false);
                    }
                }
                Index::Expr(e) => self.expr(e, false),
            }
        }
    }

    /// `e` and its sub-expressions: `tile.index` uses, and when `loads`, the dims the loads
    /// index with a bare tile.
    fn expr(&mut self, e: &'k Expr, loads: bool) {
        let (host, tiles, requirement) = (self.host, &self.tiles, &mut self.facts.requirement);
        super::walk::each_expr(e, &mut |x| {
            if let ExprKind::TileAttr {
                tile,
                attr: super::TileAttr::Index,
            } = &x.kind
            {
                if let Some(bid) = tile_named(tiles, tile) {
                    requirement[bid] = requirement[bid].max(2);
                }
            } else if loads
                && let ExprKind::Load {
                    tensor, indices, ..
                } = &x.kind
            {
                require_indexed(host, tiles, requirement, tensor, indices, true);
            }
        });
    }
}

/// The block id of the tile variable `name` in scope (the innermost binding).
fn tile_named(tiles: &[(&str, BlockId)], name: &str) -> Option<BlockId> {
    tiles
        .iter()
        .rev()
        .find(|(n, _)| *n == name)
        .map(|&(_, b)| b)
}

/// `e` with a name replaced by the value of its first assignment in `bound` (up to 8 steps).
fn resolve<'a>(e: &'a Expr, bound: &[(&str, &'a Expr)]) -> &'a Expr {
    let mut e = e;
    for _ in 0..8 {
        let ExprKind::Name(n) = &e.kind else { break };
        let Some(&(_, v)) = bound.iter().find(|(t, _)| t == n) else {
            break;
        };
        e = v;
    }
    e
}

/// The tile whose block size, or whose live extent `end - begin`, `e` is (names resolved).
fn bounding_tile<'a>(e: &'a Expr, bound: &[(&str, &'a Expr)]) -> Option<&'a str> {
    let e = resolve(e, bound);
    if let ExprKind::TileAttr {
        tile,
        attr: super::TileAttr::BlockSize,
    } = &e.kind
    {
        return Some(tile);
    }
    let ExprKind::Binary {
        op: super::BinOp::Sub,
        lhs,
        rhs,
    } = &e.kind
    else {
        return None;
    };
    begin_end_tile(rhs, lhs, bound)
}

/// The tile whose `begin` and `end` these are (names resolved).
fn begin_end_tile<'a>(
    begin: &'a Expr,
    end: &'a Expr,
    bound: &[(&str, &'a Expr)],
) -> Option<&'a str> {
    let (
        ExprKind::TileAttr {
            tile: a,
            attr: super::TileAttr::Begin,
        },
        ExprKind::TileAttr {
            tile: b,
            attr: super::TileAttr::End,
        },
    ) = (&resolve(begin, bound).kind, &resolve(end, bound).kind)
    else {
        return None;
    };
    (a == b).then_some(a.as_str())
}

/// Raises the requirement of every tile that indexes a dim of host tensor `tensor` bare
/// (`x[tile, :]`) in `indices`: to the dim's TPU alignment (the host tensor's shape and
/// bitwidth give it), and for a `load` whose value multiplies out to the block (D-1.5.1-08: a
/// size-`block` kernel tensor, as `t.index` registers) to at least 2.
fn require_indexed(
    host: &HostEnv,
    tiles: &[(&str, BlockId)],
    requirement: &mut [i64],
    tensor: &str,
    indices: &[Index],
    load: bool,
) {
    let mut dim = 0;
    for index in indices {
        if let Some(bid) = bare_tile(index, tiles)
            && let Some(t) = host.tensors.get(tensor)
            && dim < t.shape.len()
        {
            let align = required_alignment(t.shape.len(), dim, t.dtype.bitwidth().min(32));
            requirement[bid] = requirement[bid].max(align);
            if load && block_sized_load(indices, dim, &t.shape) {
                requirement[bid] = requirement[bid].max(2);
            }
        }
        match index {
            Index::NewAxis => {}
            Index::Full | Index::Int(_) | Index::Slice { .. } | Index::Expr(_) => dim += 1,
        }
    }
}

/// The block id of an index entry that is a bare tile variable.
fn bare_tile(index: &Index, tiles: &[(&str, BlockId)]) -> Option<BlockId> {
    match index {
        Index::Expr(Expr {
            kind: ExprKind::Name(n),
            ..
        }) => tile_named(tiles, n),
        Index::Full | Index::NewAxis | Index::Int(_) | Index::Slice { .. } | Index::Expr(_) => None,
    }
}

/// Whether the value of a load `tensor[indices]` whose tile indexes tensor dim `tile_dim` has
/// exactly the tile's size as the product of its shape (D-1.5.1-08's `math.prod(shape) ==
/// block`): every other dim it keeps is 1 (a `None`, or a `:` or a literal one-element slice of
/// a size-1 dim); an int drops its dim; any other index (a second tile, an iota, a tensor)
/// makes the product another symbol.
fn block_sized_load(indices: &[Index], tile_dim: usize, shape: &[usize]) -> bool {
    let mut dim = 0;
    for index in indices {
        let one = match index {
            Index::NewAxis => true,
            Index::Int(_) => true,
            Index::Full => shape.get(dim) == Some(&1),
            Index::Slice { start, stop, step } => {
                // `None`: the bound is absent; `Some(None)`: it is not a literal.
                let lit = |e: &Option<Expr>| {
                    e.as_ref().map(|e| match e.kind {
                        ExprKind::Int(v) => Some(v),
                        _ => None,
                    })
                };
                shape.get(dim) == Some(&1)
                    && step.is_none()
                    && matches!(lit(start), None | Some(Some(0)))
                    && matches!(lit(stop), None | Some(Some(1..)))
            }
            Index::Expr(_) => dim == tile_dim,
        };
        if !one {
            return false;
        }
        match index {
            Index::NewAxis => {}
            Index::Full | Index::Int(_) | Index::Slice { .. } | Index::Expr(_) => dim += 1,
        }
    }
    // Dims the list leaves out are kept whole.
    shape.iter().skip(dim).all(|&n| n == 1)
}
