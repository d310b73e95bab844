//! DMA staging of loads (`pallas_load_buffer_count`, spec §1.1, §1.4, §3.2, §3.5 example 3,
//! as Helion 1.5.1 decides it: D-1.5.1-11): which loads are moved to HBM and read through a
//! VMEM scratch filled by manual DMA, decided once per case before lowering, and the
//! statements that move the data.
//!
//! # The rule (D-1.5.1-11; what pallas-diff emits, and why)
//! Helion 1.5.1 stages a tensor loaded in a `fori_loop` body (`_classify_pipelined_tensors`,
//! helion/_compiler/pallas/tracing_ops.py) whatever its count, the count deciding only how:
//! * `pallas_loop_type` resolves to `fori_loop` (explicitly, or by D-1.5.1-10's default).
//!   Under `unroll` (a Python `for`) and `emit_pipeline` (which pipelines by itself) nothing is
//!   staged: the load stays a whole-array VMEM read.
//! * the per-iteration VMEM tile is DMA-aligned (`is_tpu_dma_aligned_shape`,
//!   helion/_compiler/pallas/dma.py: rank ≥ 2, `shape[-1] * itemsize % 128 == 0` and
//!   `shape[-2] % 8 == 0`; rank 1, `shape[0] % (128 * 32 / bits) == 0`), or the load is a row
//!   slab of a float tensor (the tile's dim is dim 0, the rest `:`) under a loop with
//!   data-dependent bounds (a bound computed from a value read out of a tensor, as spec §3.5
//!   example 3's `hl.tile(start, end)` with `start`/`end` loaded from SMEM). A tile that fails
//!   both stays whole in VMEM whatever the count.
//! * the tensor is not accessed in a root graph, not written (stored or atomically updated)
//!   and not kernel-owned scratch.
//!
//! What the model covers of that, and what it keeps in VMEM instead (values are the same
//! either way, D-1.5.1-11 changes emitted code only):
//! * the load must be `x[t, :, ...]`: one dim indexed by the tile `t` of its innermost
//!   enclosing loop (a one-dim `hl.tile`, nested, whose variable the body never rebinds), every
//!   other index `:`. That is what makes the next block's source address known before the
//!   body runs; other forms stay in VMEM.
//! * `x` is a tensor parameter that the kernel loads exactly once and never writes (aliases
//!   included). Helion forces the count to 1 for a tensor also stored in the loop and sends a
//!   tensor with several load sites down a separate per-site route; neither is modelled, so
//!   such tensors stay whole in VMEM (a tensor left in HBM cannot be read or written directly).
//!
//! The count is the tensor's `pallas_load_buffer_count` entry (entry i belongs to the i-th
//! tensor parameter; the planner refuses a list that is not one 1 or 2 per tensor parameter,
//! `config.load-buffer-count`), 1 when the key is absent:
//! * **1** ([`Depth::Sync`]): a one-slot scratch `x_buf` of the tile's shape and one DMA
//!   semaphore; each iteration copies its block and waits for it before the body reads it.
//! * **2** ([`Depth::Double`]): the spec's primed and prefetched double buffer below.
//!
//! The decision does not depend on the resident-Ref plan: a planned root becomes
//! `x_block = x_buf.at[:, :, :]` (count 1) or `x_block = x_buf.at[_j % 2].at[:, :, :]`
//! (count 2, spec §3.2); an ordinary load reads the slot as a value (`x_buf[:, :, :]`,
//! `x_buf.at[_j % 2][:, :, :]`) and applies the loop mask as usual.
//!
//! # The schedules
//! Count 1 (Helion binds the descriptor, `_copy = pltpu.make_async_copy(...)`,
//! `_copy.start()`, `_copy.wait()`; the model spells the descriptor out twice, which the
//! interpreters execute the same way):
//! ```text
//! def _fori_body_<bid>(_j, _carry):
//!     offset_<bid> = begin + _j * bs
//!     pltpu.make_async_copy(x.at[pl.ds(offset_<bid>, bs), :, :], x_buf, x_sem).start()
//!     pltpu.make_async_copy(x.at[pl.ds(offset_<bid>, bs), :, :], x_buf, x_sem).wait()
//!     x_block = x_buf.at[:, :, :]
//! ```
//! Count 2 (spec §1.4, §3.5 example 3):
//! ```text
//! _num_iterations = (end - begin + bs - 1) // bs
//! @pl.when(_num_iterations > 0)
//! def _dma_prime_<bid>():
//!     pltpu.make_async_copy(x.at[pl.ds(begin, bs), :, :], x_buf.at[0], x_sem.at[0]).start()
//! def _fori_body_<bid>(_j, _carry):
//!     offset_<bid> = begin + _j * bs
//!     @pl.when(_j + 1 < _num_iterations)
//!     def _dma_prefetch_<bid>():
//!         pltpu.make_async_copy(x.at[pl.ds(begin + (_j + 1) * bs, bs), :, :],
//!                               x_buf.at[(_j + 1) % 2], x_sem.at[(_j + 1) % 2]).start()
//!     pltpu.make_async_copy(x.at[pl.ds(offset_<bid>, bs), :, :], x_buf.at[_j % 2],
//!                           x_sem.at[_j % 2]).wait()
//!     x_block = x_buf.at[_j % 2].at[:, :, :]
//! ```
//!
//! # Tail tiles read padding, never past the array
//! The DMA of a partial last block reads `bs` rows from `offset`, past the tensor's end. The
//! TPU interpreter raises on it (measured, jax 0.10.2: `IndexError: Out-of-bounds read of
//! (... hbm ...): reading [(slice(8, 12, 1), ...)] but buffer has shape (9, 2, 128)` at the
//! `.wait()`), and a TPU DMA out of its buffer is a fault; clamping the start instead would
//! shift the rows under the mask (spec §4 D12). So the HBM operand is padded exactly like a
//! whole-VMEM one (upstream's `_ds_pad_dims`, `lower::pad`: every tile-indexed dim is
//! extended to the furthest `offset + bs` any tile can reach), and the loop mask (or the
//! resident plan's live guard) keeps the padding out of results.

use super::{Lowerer, RefOrigin};
use lang::ir::hash::{FastMap, FastSet};
use lang::ir::sym::BlockId;
use lang::ir::{Expr, ExprKind, Index, Loop, LoopKind, LoopType, NodeKey, Stmt, StmtKind, walk};
use lang::pallas::{self, CopyOp, Expr as P, IndexPart, MemorySpace, Scratch};
use lang::tensor::DType;

type PStmt = pallas::Stmt;

/// How a staged load is buffered: by its tensor's `pallas_load_buffer_count` entry
/// (D-1.5.1-11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Depth {
    /// Count 1, or no key: one slot, copied and waited for in each iteration.
    Sync,
    /// Count 2: two slots, block 0 primed before the loop, block `_j + 1` prefetched.
    Double,
}

/// One staged load, as decided before lowering.
#[derive(Clone, Debug)]
pub(crate) struct DmaLoad {
    /// The host Ref it reads (index into `Lowerer::refs`).
    pub k: usize,
    /// The tensor dim indexed by the loop's tile.
    pub dim: usize,
    /// One slot or two.
    pub depth: Depth,
}

/// A staged load while its loop is lowered: names of its scratch and the loop index.
#[derive(Clone, Debug)]
pub(crate) struct DmaSlot {
    /// The load.
    pub load: DmaLoad,
    /// The VMEM scratch (`x_buf`): the tile's shape, with a leading slot dim of 2 when
    /// double-buffered.
    pub buf: String,
    /// The semaphore (`x_sem`): one, or a pair when double-buffered.
    pub sem: String,
    /// The `fori_loop` index (`_j`).
    pub j: String,
    /// The loop's block id (its mask masks an ordinary load of the slot).
    pub bid: BlockId,
}

/// The staged loads of a case.
#[derive(Clone, Debug, Default)]
pub(crate) struct DmaPlan {
    /// By load expression.
    pub loads: FastMap<NodeKey, DmaLoad>,
    /// The loads of each loop (keyed by the loop's address), in source order.
    pub by_loop: FastMap<usize, Vec<NodeKey>>,
}

/// The key of a loop.
pub(crate) fn loop_key(lp: &Loop) -> usize {
    lp as *const Loop as usize
}

/// Calls `f` on the loads of a body with their innermost enclosing loop below the launch grid
/// (`None` directly in the grid's body), in source order.
fn each_load<'a>(
    body: &'a [Stmt],
    inner: Option<&'a Loop>,
    f: &mut dyn FnMut(&Expr, Option<&Loop>),
) {
    for s in body {
        walk::stmt_exprs(s, &mut |e| {
            walk::each_expr(e, &mut |x| {
                if matches!(x.kind, ExprKind::Load { .. }) {
                    f(x, inner);
                }
            })
        });
        match &s.kind {
            StmtKind::For(lp) => each_load(&lp.body, Some(lp), f),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                each_load(then_body, inner, f);
                each_load(else_body, inner, f);
            }
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::Return(_) => {}
        }
    }
}

/// Helion's `is_tpu_dma_aligned_shape` (helion/_compiler/pallas/dma.py, D-1.5.1-11): TPU DMA
/// rows hold a multiple of 128 contiguous bytes and a transfer a multiple of 8 rows; a 1-D
/// transfer a multiple of `128 * 32 / bits` elements (bits capped at 32).
fn is_tpu_dma_aligned_shape(shape: &[i64], dtype: DType) -> bool {
    match shape {
        [] => true,
        [n] => n % (128 * (32 / i64::from(dtype.bitwidth().min(32)))) == 0,
        [.., rows, last] => last * dtype.size_bytes() as i64 % 128 == 0 && rows % 8 == 0,
    }
}

/// The names whose value is computed from data read out of a tensor (a load, or a name
/// assigned from one), anywhere in the kernel: what makes a loop bound data-dependent
/// (D-1.5.1-11's row-slab rule). Scoping is ignored, which can only call more bounds
/// data-dependent; a tensor's `size()` is static and does not count.
fn data_names(kernel: &[Stmt]) -> FastSet<String> {
    let mut names = FastSet::default();
    loop {
        let before = names.len();
        walk::each_stmt(kernel, &mut |s| match &s.kind {
            StmtKind::Assign { target, value } | StmtKind::AugAssign { target, value, .. } => {
                if reads_data(value, &names) {
                    names.insert(target.clone());
                }
            }
            StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::For(_)
            | StmtKind::If { .. }
            | StmtKind::Return(_) => {}
        });
        if names.len() == before {
            return names;
        }
    }
}

/// Whether `e` reads tensor data: a load, or a name of `data` outside a `size()`.
fn reads_data(e: &Expr, data: &FastSet<String>) -> bool {
    let mut sized: Option<*const Expr> = None;
    let mut hit = false;
    walk::each_expr(e, &mut |x| match &x.kind {
        ExprKind::Load { .. } => hit = true,
        ExprKind::Size { value, .. } => sized = Some(&**value as *const Expr),
        ExprKind::Name(n) => hit |= sized != Some(x as *const Expr) && data.contains(n),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::TileAttr { .. }
        | ExprKind::Binary { .. }
        | ExprKind::Compare { .. }
        | ExprKind::Subscript { .. }
        | ExprKind::Arange { .. }
        | ExprKind::Zeros { .. }
        | ExprKind::Full { .. }
        | ExprKind::Cast { .. }
        | ExprKind::Sum { .. }
        | ExprKind::View { .. }
        | ExprKind::Permute { .. }
        | ExprKind::Op { .. }
        | ExprKind::Alloc { .. } => {}
    });
    hit
}

impl DmaPlan {
    /// Decides the staged loads of `l`'s case (the module docs give the rule).
    pub fn of(l: &Lowerer<'_>) -> DmaPlan {
        let mut plan = DmaPlan::default();
        if l.case.effective_loop_type() != LoopType::ForiLoop {
            return plan;
        }
        // Loads per host Ref, over the whole kernel.
        let mut per_ref: FastMap<usize, usize> = FastMap::default();
        walk::each_stmt(&l.case.kernel.body, &mut |s| {
            walk::stmt_exprs(s, &mut |e| {
                walk::each_expr(e, &mut |x| {
                    if let ExprKind::Load { tensor, .. } = &x.kind
                        && let Some(&k) = l.host_names.get(tensor)
                    {
                        *per_ref.entry(k).or_insert(0) += 1;
                    }
                })
            })
        });
        let data = data_names(&l.case.kernel.body);
        // Entry i is the i-th tensor parameter's, 1 when the key is absent (D-1.5.1-11; the
        // planner refused a list of another length or with another value).
        let depth_of = |k: usize| {
            let count = match (&l.refs[k].origin, &l.case.config.load_buffer_count) {
                (RefOrigin::Param(i), Some(counts)) => counts.get(*i).copied().unwrap_or(1),
                (RefOrigin::Param(_), None) | (RefOrigin::Alloc(_), _) => 1,
            };
            if count >= 2 {
                Depth::Double
            } else {
                Depth::Sync
            }
        };
        // The top-level loop is the launch grid: loads in its body are not inner-loop loads.
        for s in &l.case.kernel.body {
            let StmtKind::For(grid) = &s.kind else {
                continue;
            };
            each_load(&grid.body, None, &mut |e, inner| {
                let Some(lp) = inner else { return };
                if let Some((k, dim)) = Self::eligible(l, e, lp, &per_ref, &data) {
                    plan.loads.insert(
                        NodeKey::of(e),
                        DmaLoad {
                            k,
                            dim,
                            depth: depth_of(k),
                        },
                    );
                    plan.by_loop
                        .entry(loop_key(lp))
                        .or_default()
                        .push(NodeKey::of(e));
                }
            });
        }
        plan
    }

    /// The Ref and tiled dim of load `e` in loop `lp` if D-1.5.1-11 stages it (module docs).
    fn eligible(
        l: &Lowerer<'_>,
        e: &Expr,
        lp: &Loop,
        per_ref: &FastMap<usize, usize>,
        data: &FastSet<String>,
    ) -> Option<(usize, usize)> {
        let ExprKind::Load {
            tensor, indices, ..
        } = &e.kind
        else {
            return None;
        };
        if lp.kind != LoopKind::Tile || lp.dims.len() != 1 {
            return None;
        }
        let var = lp.vars.first()?;
        if lang::ir::walk::assigned(&lp.body).iter().any(|n| n == var) {
            return None;
        }
        let &k = l.host_names.get(tensor)?;
        let r = &l.refs[k];
        if r.written || !matches!(r.origin, RefOrigin::Param(_)) || per_ref.get(&k) != Some(&1) {
            return None;
        }
        if indices.len() > r.shape.len() {
            return None;
        }
        let mut dim = None;
        for (d, index) in indices.iter().enumerate() {
            match index {
                Index::Full => {}
                Index::Expr(Expr {
                    kind: ExprKind::Name(n),
                    ..
                }) if n == var && dim.is_none() => dim = Some(d),
                Index::Expr(_) | Index::NewAxis | Index::Int(_) | Index::Slice { .. } => {
                    return None;
                }
            }
        }
        let dim = dim?;
        let &bid = l.types.blocks.loop_ids(lp).first()?;
        let bs = l.types.block_size(bid).max(1);
        let tile: Vec<i64> = r
            .shape
            .iter()
            .enumerate()
            .map(|(d, &s)| if d == dim { bs } else { s })
            .collect();
        let data_dependent = lp.dims.iter().any(|d| {
            reads_data(&d.end, data) || d.begin.as_ref().is_some_and(|b| reads_data(b, data))
        });
        let row_slab = r.dtype.is_float() && dim == 0 && data_dependent;
        (is_tpu_dma_aligned_shape(&tile, r.dtype) || row_slab).then_some((k, dim))
    }
}

impl Lowerer<'_> {
    /// A name for a scratch of Ref `py` (`x_buf`, `x_sem`) that no IR name and no other
    /// scratch uses.
    fn dma_name(&self, py: &str, suffix: &str) -> String {
        let mut name = format!("{py}{suffix}");
        while self.ir_names.contains(&name) || self.scratch.iter().any(|(n, _)| *n == name) {
            name.push_str("_dma");
        }
        name
    }

    /// Allocates the scratch of every staged load of loop `lp` (lowered as a `fori_loop` with
    /// index `j`) and moves their tensors to HBM: the slots to lower its loads with.
    pub(super) fn dma_slots(&mut self, lp: &Loop, j: &str) -> Vec<(NodeKey, DmaSlot)> {
        let Some(keys) = self.dma.by_loop.get(&loop_key(lp)).cloned() else {
            return Vec::new();
        };
        let mut slots = Vec::new();
        for key in keys {
            let Some(load) = self.dma.loads.get(&key).cloned() else {
                continue;
            };
            let Some(&bid) = self.types.blocks.loop_ids(lp).first() else {
                continue;
            };
            let bs = self.bs_of(bid);
            let r = &self.refs[load.k];
            let (py, dtype) = (r.py.clone(), r.dtype);
            let tile = r
                .shape
                .iter()
                .enumerate()
                .map(|(d, &s)| if d == load.dim { bs } else { s });
            // D-1.5.1-11: count 1 is one slot of the tile's shape and one semaphore, count 2
            // a leading slot dim of 2 and a semaphore per slot.
            let (block, sems) = match load.depth {
                Depth::Sync => (tile.collect(), vec![]),
                Depth::Double => (std::iter::once(2).chain(tile).collect(), vec![2]),
            };
            let buf = self.dma_name(&py, "_buf");
            self.scratch.push((
                buf.clone(),
                Scratch {
                    space: MemorySpace::Vmem,
                    shape: block,
                    dtype,
                },
            ));
            let sem = self.dma_name(&py, "_sem");
            self.scratch.push((
                sem.clone(),
                Scratch {
                    space: MemorySpace::DmaSemaphore,
                    shape: sems,
                    dtype: DType::Int32,
                },
            ));
            self.refs[load.k].hbm = true;
            slots.push((
                key,
                DmaSlot {
                    load,
                    buf,
                    sem,
                    j: j.to_string(),
                    bid,
                },
            ));
        }
        slots
    }

    fn bs_of(&self, b: BlockId) -> i64 {
        self.types.block_size(b).max(1)
    }

    /// The HBM window `x.at[..., pl.ds(start, bs), ...]` of slot `s` for a block starting at
    /// `start`.
    fn dma_source(&self, s: &DmaSlot, start: P, block: P) -> P {
        let r = &self.refs[s.load.k];
        let parts = r
            .shape
            .iter()
            .zip(&r.pad)
            .enumerate()
            .map(|(d, (&size, &pad))| {
                if d == s.load.dim {
                    IndexPart::Expr(P::ds(start.clone(), block.clone()))
                } else if pad > 0 {
                    IndexPart::Expr(P::ds(P::Int(0), P::Int(size)))
                } else {
                    IndexPart::Full
                }
            })
            .collect();
        P::name(&r.py).at(parts)
    }

    /// `x_buf.at[k]` / `x_sem.at[k]`.
    fn slot(name: &str, k: P) -> P {
        P::name(name).at(vec![IndexPart::Expr(k)])
    }

    /// `_j % 2` / `(_j + 1) % 2`.
    fn parity(j: P) -> P {
        P::Binary {
            op: pallas::BinOp::Mod,
            lhs: Box::new(j),
            rhs: Box::new(P::Int(2)),
        }
    }

    /// Before the loop: `_num_iterations` and the primed copy of block 0 of every
    /// double-buffered slot (`slots` holds only those). Returns the statements and the name of
    /// the trip count.
    pub(super) fn dma_prologue(
        &mut self,
        slots: &[DmaSlot],
        ld: &super::LoopDim,
    ) -> (Vec<PStmt>, String) {
        let n = self.fresh_dma_count();
        let mut out = vec![PStmt::Assign {
            target: pallas::Target::Name(n.clone()),
            value: ld.count(),
        }];
        let starts = slots
            .iter()
            .map(|s| PStmt::AsyncCopy {
                src: self.dma_source(s, ld.begin.clone(), ld.block.clone()),
                dst: Self::slot(&s.buf, P::Int(0)),
                sem: Self::slot(&s.sem, P::Int(0)),
                op: CopyOp::Start,
            })
            .collect();
        out.push(PStmt::When {
            pred: P::name(&n).compare(pallas::CmpOp::Gt, P::Int(0)),
            body: pallas::Function {
                name: format!("_dma_prime_{}", ld.bid),
                params: vec![],
                body: starts,
            },
        });
        (out, n)
    }

    /// At the top of the loop body, for the double-buffered `slots`: prefetch block `_j + 1`
    /// into the other slot, then wait for block `_j`.
    pub(super) fn dma_body_head(
        &self,
        slots: &[DmaSlot],
        ld: &super::LoopDim,
        count: &str,
    ) -> Vec<PStmt> {
        let mut out = Vec::new();
        let Some(j) = slots.first().map(|s| P::name(&s.j)) else {
            return out;
        };
        let next = j.clone().plus(P::Int(1));
        let prefetch = slots
            .iter()
            .map(|s| PStmt::AsyncCopy {
                src: self.dma_source(
                    s,
                    ld.begin.clone().plus(P::Binary {
                        op: pallas::BinOp::Mul,
                        lhs: Box::new(next.clone()),
                        rhs: Box::new(ld.block.clone()),
                    }),
                    ld.block.clone(),
                ),
                dst: Self::slot(&s.buf, Self::parity(next.clone())),
                sem: Self::slot(&s.sem, Self::parity(next.clone())),
                op: CopyOp::Start,
            })
            .collect();
        out.push(PStmt::When {
            pred: next.clone().compare(pallas::CmpOp::Lt, P::name(count)),
            body: pallas::Function {
                name: format!("_dma_prefetch_{}", ld.bid),
                params: vec![],
                body: prefetch,
            },
        });
        for s in slots {
            out.push(PStmt::AsyncCopy {
                src: self.dma_source(s, P::name(&ld.offset), ld.block.clone()),
                dst: Self::slot(&s.buf, Self::parity(j.clone())),
                sem: Self::slot(&s.sem, Self::parity(j.clone())),
                op: CopyOp::Wait,
            });
        }
        out
    }

    /// At the top of the loop body, for the single-buffered `slots` (count 1, D-1.5.1-11):
    /// copy block `_j` into the slot and wait for it.
    pub(super) fn dma_sync_copies(&self, slots: &[DmaSlot], ld: &super::LoopDim) -> Vec<PStmt> {
        let mut out = Vec::new();
        for s in slots {
            for op in [CopyOp::Start, CopyOp::Wait] {
                out.push(PStmt::AsyncCopy {
                    src: self.dma_source(s, P::name(&ld.offset), ld.block.clone()),
                    dst: P::name(&s.buf),
                    sem: P::name(&s.sem),
                    op,
                });
            }
        }
        out
    }

    /// The current slot of a staged load, `x_buf` (count 1) or `x_buf.at[_j % 2]` (count 2),
    /// and the block's rank.
    pub(super) fn dma_current(&self, s: &DmaSlot) -> (P, usize) {
        let rank = self.refs[s.load.k].shape.len();
        let slot = match s.load.depth {
            Depth::Sync => P::name(&s.buf),
            Depth::Double => Self::slot(&s.buf, Self::parity(P::name(&s.j))),
        };
        (slot, rank)
    }

    fn fresh_dma_count(&mut self) -> String {
        let n = self.fresh.entry("_num_iterations").or_insert(0);
        let name = match *n {
            0 => "_num_iterations".to_string(),
            k => format!("_num_iterations_{k}"),
        };
        *n += 1;
        name
    }
}

#[cfg(test)]
mod tests {
    use super::is_tpu_dma_aligned_shape;
    use lang::tensor::DType;

    #[test]
    fn dma_alignment_is_helions() {
        // Rank >= 2: rows of a multiple of 128 bytes (32 f32 or int32, 64 bf16) and a multiple
        // of 8 rows.
        assert!(is_tpu_dma_aligned_shape(&[4, 8, 128], DType::Float32));
        assert!(!is_tpu_dma_aligned_shape(&[4, 2, 128], DType::Float32));
        assert!(!is_tpu_dma_aligned_shape(&[8, 80], DType::Int32));
        assert!(is_tpu_dma_aligned_shape(&[8, 96], DType::Int32));
        assert!(is_tpu_dma_aligned_shape(&[8, 64], DType::Bfloat16));
        assert!(!is_tpu_dma_aligned_shape(&[8, 32], DType::Bfloat16));
        // Rank 1: 128 * 32 / bits elements.
        assert!(is_tpu_dma_aligned_shape(&[256], DType::Float32));
        assert!(!is_tpu_dma_aligned_shape(&[128], DType::Bfloat16));
        assert!(is_tpu_dma_aligned_shape(&[256], DType::Bfloat16));
        assert!(is_tpu_dma_aligned_shape(&[], DType::Float32));
    }
}
