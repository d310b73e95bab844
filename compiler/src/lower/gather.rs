//! A gather out of a resident table (`table[indices[tile_b], tile_e]`, `values[tile_a,
//! idx[tile_b, tile_s], tile_c]`): a load with one int-tensor index read from memory, lowered
//! as Helion 1.5.1's `emit_gather` (`helion/_compiler/pallas/gather.py`) does under
//! `pallas_indirect_access_mode="one_hot"` (its default): the table read whole along the
//! gathered dim, and `dot_general(one_hot(idx, V), table)` contracting the one-hot's trailing
//! dim with the gathered dim, `preferred_element_type=jnp.float32` (and `Precision.HIGHEST`
//! for a float32 table), cast back to the table's dtype, the table's leading dims moved back
//! in front (`jnp.moveaxis`, here the equal `jnp.transpose`).
//!
//! What that reading means, and our engines reproduce: an index outside `0..V`, a negative
//! one included, gathers zeros (torch wraps a negative index and raises past the end), and a
//! NaN or infinity anywhere along the gathered dim reaches every output of its column
//! (`0 * NaN`). A table is never masked (Helion's gather reads it unmasked). One departure
//! from Helion: the one-hot rows of index lanes past a partial tile are masked to zero, so
//! they gather nothing; Helion gathers a row there and a reduction over the gathered rows adds
//! it (a Helion 1.5.1 bug, `docs/helion-findings.md`, which then shows on Helion alone, as
//! its other value bugs do).
//!
//! Gaps: an index that is not itself a load (Helion reads `base + hl.arange(n)` as a
//! contiguous window, `_match_contiguous_range_index`, and other computed indices by rules
//! this model does not reproduce), several tensor indices, `None`, an int index beside the
//! tensor index (it drops a dim before the gathered one), an int32 table (Helion's
//! `jnp.sum(table * one_hot)` select path), a table staged by DMA or tiled by a `BlockSpec`
//! along the gathered dim, and a table over Helion's 16 MiB resident-block threshold
//! (`_check_resident_block_size`, an `InvalidConfig` in 1.5.1).

use super::{Env, LResult, Lowerer, Val, gap};
use lang::ir::types::Ty;
use lang::ir::{DType, Expr, ExprKind, Index};
use lang::pallas::{self, BlockDim, Expr as P, Jnp};

type PStmt = pallas::Stmt;

/// Helion 1.5.1's resident-block threshold for a one-hot gather's table
/// (`_GATHER_VMEM_THRESHOLD_BYTES`, `helion/_compiler/pallas/gather.py`).
const GATHER_TABLE_MAX_BYTES: i64 = 16 << 20;

impl Lowerer<'_> {
    /// The load `e` of `tensor[indices]` when one index is an int tensor: `Ok(None)` when no
    /// index is a tensor (an ordinary load), else the gather or its gap (module docs).
    pub(super) fn lower_gather(
        &mut self,
        e: &Expr,
        k: usize,
        indices: &[Index],
        env: &Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<Option<P>> {
        let positions: Vec<usize> = (0..indices.len())
            .filter(|&p| self.types.is_tensor_index(&indices[p]))
            .collect();
        let p = match positions.as_slice() {
            [] => return Ok(None),
            [p] => *p,
            _ => return gap(e.span, "a load with several tensor indices"),
        };
        let Index::Expr(idx) = &indices[p] else {
            return gap(e.span, "a gather");
        };
        if !matches!(idx.kind, ExprKind::Load { .. }) {
            return gap(
                idx.span,
                "a tensor index that is not a load (a computed gather index)",
            );
        }
        let idx_rank = match self.types.of(idx) {
            Ty::Tensor {
                dtype: DType::Int32,
                dims,
            } => dims.len(),
            _ => return gap(idx.span, "a gather index that is not int32"),
        };
        if indices.iter().any(|i| matches!(i, Index::NewAxis)) {
            return gap(e.span, "a gather with `None`");
        }
        let table = &self.refs[k];
        let dtype = table.dtype;
        if !matches!(dtype, DType::Float32 | DType::Bfloat16) {
            return gap(e.span, "a gather from an int32 table");
        }
        let bytes = table.shape.iter().product::<i64>() * i64::from(dtype.bitwidth() / 8);
        if bytes > GATHER_TABLE_MAX_BYTES {
            return gap(e.span, "a gather from a table over 16 MiB");
        }
        if table.hbm || matches!(table.block.get(p), Some(BlockDim::Tiled { .. })) {
            return gap(
                e.span,
                "a gather from a table staged by DMA or tiled by a BlockSpec",
            );
        }
        if self.plan.resident(e).is_some() {
            return gap(e.span, "a gather that is a resident root");
        }
        let rank = table.shape.len();
        let mut whole = indices.to_vec();
        whole[p] = Index::Full;
        let r = self.ref_index(k, &whole, true, env, out, e.span)?;
        if r.shape.len() != rank {
            return gap(e.span, "a gather beside an int index");
        }
        let v = r.shape[p];
        let table_val = P::name(&self.refs[k].py).index(r.parts);
        let idx_val = self.lower_expr(idx, env, out)?;
        let mut one_hot: P = Jnp::OneHot {
            x: Box::new(idx_val),
            n: v,
            dtype,
        }
        .into();
        // The one-hot rows of the index lanes past a partial tile are zeroed, so they gather
        // nothing: Helion 1.5.1 leaves them, and a reduction over the gathered rows adds rows
        // the tile does not hold (`docs/helion-findings.md`, a Helion-only finding here).
        let ExprKind::Load {
            indices: idx_indices,
            ..
        } = &idx.kind
        else {
            return gap(idx.span, "a gather index that is not a load");
        };
        for (pos, i) in idx_indices.iter().enumerate() {
            let tile = match i {
                Index::Expr(Expr {
                    kind: ExprKind::Name(n),
                    ..
                }) => match env.get(n) {
                    Some(Val::Tile(b)) => Some(*b),
                    _ => None,
                },
                Index::Full | Index::Slice { .. } | Index::Expr(_) => None,
                Index::Int(_) | Index::NewAxis => {
                    return gap(idx.span, "a gather index read with an int or `None`");
                }
            };
            if let Some(m) = tile
                .and_then(|b| self.loops.get(&b))
                .and_then(|ld| ld.mask.clone())
            {
                one_hot = self.apply_mask(one_hot, &m, pos, idx_rank + 1, dtype);
            }
        }
        let mut g = P::from(Jnp::DotGeneral {
            lhs: Box::new(one_hot),
            rhs: Box::new(table_val),
            contract: (idx_rank, p),
            batched: false,
            preferred_f32: true,
            highest: dtype == DType::Float32,
        })
        .astype(dtype);
        if p > 0 {
            // `jnp.moveaxis(g, (n, .., n + p - 1), (0, .., p - 1))`.
            let mut axes: Vec<usize> = (idx_rank..idx_rank + p).collect();
            axes.extend(0..idx_rank);
            axes.extend(idx_rank + p..idx_rank + rank - 1);
            g = Jnp::Transpose {
                x: Box::new(g),
                axes,
            }
            .into();
        }
        Ok(Some(g))
    }
}
