//! Grid-level BlockSpec blocks (D-1.5.1-19, spec §3.1 and §3.2): which host-tensor dims reach
//! the kernel as a `pl.BlockSpec` block of a launch-grid tile instead of the whole array.
//!
//! Helion 1.5.1 (`PallasBackend._compute_block_spec_info` over `plan_tiling`'s
//! `pallas_tensor_dim_tilings`) gives a tensor dim tiled by a launch-grid block a block of that
//! size, chosen by `min(program_id(g), cdiv(dim, block) - 1)`; in the kernel the operand *is*
//! the block, so the tile indexes it with `:` (`x_block = x.at[:, :, :]`, value load
//! `x[:, :, :]`) and the dim needs no `_ds_pad_dims` padding. `offset_<g> = pid * block` still
//! serves the tile attributes and masks.
//!
//! This module owns that decision. A dim is blocked when all of the following hold, and kept
//! whole (padded, indexed by `pl.ds`) otherwise:
//! * the tensor is a parameter the kernel only reads (not written, not returned, not staged by
//!   DMA): an output block is not modelled (its initial contents and write-back per block);
//! * the top-level loop is an `hl.tile` (not `hl.grid`) whose dim begins at 0, so block `i`
//!   is the tile of program `i`;
//! * every load of the tensor indexes the dim with the bare tile of one launch-grid dim. Any
//!   other index on it (`:`, an int, `tile.begin + c`, `tile.index`, an inner tile, a second
//!   grid tile) keeps it whole. Helion also blocks a dim beside `:` or `tile.begin + c`
//!   accesses; there its `:` would read only the block, which the model does not reproduce;
//! * Helion's alignment rule (`plan_tiling`): the block is not below the dim while missing
//!   the dim's TPU alignment (`required_alignment`);
//! * the dim is at least the block: a dim smaller than the block would give a block shorter
//!   than the tile's values (Helion's `min(bs, dim)`), which is not modelled.
//!
//! A partial last block (dim not a multiple of the block) is padded by the interpreter, not
//! the launcher, with poison (measured, jax 0.10.2, both interpreters: NaN; int32 `INT_MIN`
//! generic, `INT_MAX` TPU; `pallas-sim` fills it the same). Only masked reads reach those
//! rows (the planner refuses every other read of a guarded root), and `NaN * 0` is NaN, so a
//! module with a partial block masks by `jnp.where` (`Lowerer::where_masks`), as the
//! poison-padding option does; Helion's multiplication would let the poison through.

use super::Lowerer;
use lang::ir::blocks::required_alignment;
use lang::ir::hash::FastMap;
use lang::ir::sym::BlockId;
use lang::ir::{Expr, ExprKind, Index, LoopKind, StmtKind};
use lang::pallas::BlockDim;

/// What the loads of one host-tensor dim index it with, over the whole kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DimUse {
    /// No load indexes it yet.
    Unused,
    /// Every load so far indexes it with the bare tile of this launch-grid block.
    Grid(BlockId),
    /// Some load indexes it otherwise.
    Other,
}

impl DimUse {
    fn join(self, next: DimUse) -> DimUse {
        match (self, next) {
            (DimUse::Unused, n) => n,
            (DimUse::Grid(a), DimUse::Grid(b)) if a == b => self,
            (DimUse::Grid(_), DimUse::Unused) => self,
            (DimUse::Grid(_), DimUse::Grid(_) | DimUse::Other) | (DimUse::Other, _) => {
                DimUse::Other
            }
        }
    }
}

/// The launch-grid tile dims of the kernel that begin at 0: block id → grid axis.
fn grid_tiles(l: &Lowerer<'_>) -> FastMap<BlockId, usize> {
    let mut out = FastMap::default();
    for s in &l.case.kernel.body {
        let StmtKind::For(lp) = &s.kind else { continue };
        if lp.kind != LoopKind::Tile {
            return out;
        }
        for (axis, &bid) in l.types.blocks.loop_ids(lp).iter().enumerate() {
            let begins_at_zero =
                l.bounds.by_block.get(&bid).and_then(|b| b.static_begin()) == Some(0);
            if begins_at_zero {
                out.insert(bid, axis);
            }
        }
        return out;
    }
    out
}

/// Joins the uses of one load `tensor[indices]` into `uses`.
fn record(
    tensor: &str,
    indices: &[Index],
    tiles: &FastMap<&str, BlockId>,
    l: &Lowerer<'_>,
    uses: &mut FastMap<(usize, usize), DimUse>,
) {
    let Some(&k) = l.host_names.get(tensor) else {
        return;
    };
    let rank = l.refs[k].shape.len();
    let mut dim = 0;
    for index in indices {
        let u = match index {
            Index::NewAxis => continue,
            Index::Expr(Expr {
                kind: ExprKind::Name(n),
                ..
            }) => tiles
                .get(n.as_str())
                .map_or(DimUse::Other, |&b| DimUse::Grid(b)),
            Index::Full | Index::Int(_) | Index::Slice { .. } | Index::Expr(_) => DimUse::Other,
        };
        let e = uses.entry((k, dim)).or_insert(DimUse::Unused);
        *e = e.join(u);
        dim += 1;
    }
    // Dims the index leaves out are read whole.
    for d in dim..rank {
        uses.insert((k, d), DimUse::Other);
    }
}

/// Sets `HostRef::block` of every Ref (see the module docs) and drops the padding of its
/// blocked dims: their only accesses are the grid tile, which reads inside the block.
pub(crate) fn apply(l: &mut Lowerer<'_>) {
    let grid = grid_tiles(l);
    if grid.is_empty() {
        return;
    }
    let mut uses: FastMap<(usize, usize), DimUse> = FastMap::default();
    super::pad::each_host_access(&l.case.kernel.body, l, &mut |a, tiles| {
        if a.load {
            record(a.tensor, a.indices, tiles, l, &mut uses);
        }
    });
    let staged: Vec<usize> = l.dma.loads.values().map(|d| d.k).collect();
    let mut partial = false;
    for (k, r) in l.refs.iter_mut().enumerate() {
        let read_only = matches!(r.origin, super::RefOrigin::Param(_))
            && !r.written
            && !r.returned
            && !r.hbm
            && !staged.contains(&k);
        if !read_only {
            continue;
        }
        let rank = r.shape.len();
        let bits = r.dtype.bitwidth();
        for d in 0..rank {
            let Some(DimUse::Grid(b)) = uses.get(&(k, d)).copied() else {
                continue;
            };
            let Some(&axis) = grid.get(&b) else { continue };
            let bs = l.types.block_size(b).max(1);
            let dim = r.shape[d];
            let aligned = bs % required_alignment(rank, d, bits) == 0;
            if dim < bs || (bs < dim && !aligned) {
                continue;
            }
            r.block[d] = BlockDim::Tiled {
                size: bs,
                axis: (dim > bs).then_some(axis),
            };
            r.pad[d] = 0;
            partial |= dim % bs != 0;
        }
    }
    l.partial_blocks = partial;
}
