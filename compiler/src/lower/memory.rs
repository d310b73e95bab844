//! Memory operations on host tensors (spec §1.5, §1.6, §3.2): loads (ordinary masked value
//! loads, or resident `x.at[...]` Refs when the plan says so), stores and atomics
//! (read-modify-writes with sequential semantics), and the masks of partial tiles. Subscripts
//! and views of device values (resident Refs included) are in `subscript`.

use super::expr::zero;
use super::{Env, LResult, Lowerer, Val, gap};
use lang::ir::sym::BlockId;
use lang::ir::types::Ty;
use lang::ir::{AtomicOp, Expr, ExprKind, Index, Span, TileAttr};
use lang::pallas::{self, BlockDim, Expr as P, IndexPart, Jnp};
use lang::tensor::DType;

type PStmt = pallas::Stmt;

/// A host-tensor index lowered to Ref index parts.
pub(super) struct RefIndex {
    /// Parts (no `None`).
    pub(super) parts: Vec<IndexPart>,
    /// Shape of the indexed region (dims kept, before `None`s).
    pub(super) shape: Vec<i64>,
    /// Tile-indexed dims: position in the region and block id.
    tiles: Vec<(usize, BlockId)>,
    /// The `None` pattern to apply to the read value (empty when no `None`).
    newaxes: Vec<IndexPart>,
}

impl Lowerer<'_> {
    fn host_ref(&self, tensor: &str, env: &Env, span: Span) -> LResult<usize> {
        match env.get(tensor) {
            Some(Val::Host(k)) => Ok(*k),
            _ => gap(span, format!("`{tensor}` is not a host tensor here")),
        }
    }

    /// Index parts of a load (`load`), store or atomic on host Ref `k` (spec §1.5): a tile dim
    /// becomes `pl.ds(pl.multiple_of(offset, bs), bs)` (the hint only where it holds), or `:`
    /// on a grid tile's BlockSpec block (D-1.5.1-19, `block_spec`); a scalar an index; `:`
    /// stays `:` unless the dim is padded (then `pl.ds(0, size)`). A load's tile into a dim of
    /// size 1, in a loop over more rows, is a gap: Helion 1.5.1 gives such a dim no block
    /// (`_block_spec_info` `None`) and reads `bias[:, :]` of a `[1, N]` bias under
    /// `bias[tile_m, tile_n]`, a dim of 1 that broadcasts (measured; the reference reads it so
    /// too), which our IR types as the tile's block.
    pub(super) fn ref_index(
        &mut self,
        k: usize,
        indices: &[Index],
        load: bool,
        env: &Env,
        out: &mut Vec<PStmt>,
        span: Span,
    ) -> LResult<RefIndex> {
        let shape = self.refs[k].shape.clone();
        let pad = self.refs[k].pad.clone();
        let mut r = RefIndex {
            parts: Vec::new(),
            shape: Vec::new(),
            tiles: Vec::new(),
            newaxes: Vec::new(),
        };
        let consumed = indices
            .iter()
            .filter(|i| !matches!(i, Index::NewAxis))
            .count();
        if consumed > shape.len() {
            return gap(span, "more indices than dims");
        }
        let mut dim = 0;
        for index in indices {
            let size = shape.get(dim).copied().unwrap_or(1);
            match index {
                Index::NewAxis => {
                    r.newaxes.push(IndexPart::NewAxis);
                    continue;
                }
                Index::Full => {
                    r.parts.push(if pad[dim] > 0 {
                        IndexPart::Expr(P::ds(P::Int(0), P::Int(size)))
                    } else {
                        IndexPart::Full
                    });
                    r.shape.push(size);
                    r.newaxes.push(IndexPart::Full);
                }
                Index::Int(i) => {
                    let i = if *i < 0 { i + size } else { *i };
                    r.parts.push(IndexPart::Int(i));
                }
                Index::Slice { start, stop, step } => {
                    let get = |b: &Option<Expr>, dflt: i64| match b {
                        None => Some(dflt),
                        Some(x) => self.static_int(x, env),
                    };
                    let (Some(a), Some(b), Some(st)) =
                        (get(start, 0), get(stop, size), get(step, 1))
                    else {
                        return gap(span, "a host-tensor slice with non-static bounds");
                    };
                    let norm = |v: i64| {
                        if v < 0 {
                            (v + size).max(0)
                        } else {
                            v.min(size)
                        }
                    };
                    let (a, b) = (norm(a), norm(b));
                    if st != 1 {
                        return gap(span, "a strided host-tensor slice");
                    }
                    let w = (b - a).max(0);
                    r.parts.push(IndexPart::Expr(P::ds(P::Int(a), P::Int(w))));
                    r.shape.push(w);
                    r.newaxes.push(IndexPart::Full);
                }
                Index::Expr(x) => {
                    let tile = match &x.kind {
                        ExprKind::Name(n) => match env.get(n) {
                            Some(Val::Tile(b)) => Some(*b),
                            _ => None,
                        },
                        ExprKind::TileAttr {
                            tile,
                            attr: TileAttr::Index,
                        } => match env.get(tile) {
                            Some(Val::Tile(b)) => Some(*b),
                            _ => None,
                        },
                        ExprKind::TileAttr {
                            attr:
                                TileAttr::Begin
                                | TileAttr::End
                                | TileAttr::Count
                                | TileAttr::BlockSize
                                | TileAttr::Id,
                            ..
                        }
                        | ExprKind::Int(_)
                        | ExprKind::Float(_)
                        | ExprKind::Size { .. }
                        | ExprKind::Binary { .. }
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
                        | ExprKind::Alloc { .. } => None,
                    };
                    let whole_block =
                        matches!(self.refs[k].block.get(dim), Some(BlockDim::Tiled { .. }));
                    // A loop over more rows than the dim's one: torch's slice clamps to that
                    // row and Helion reads it, either way a dim of 1 that broadcasts. A loop
                    // over the one row (a single-row input) keeps the masked read.
                    let past_row_zero = |b: &BlockId| {
                        self.bounds
                            .by_block
                            .get(b)
                            .is_none_or(|lb| lb.static_end().or(lb.end_hi).is_none_or(|e| e > 1))
                    };
                    if load && size == 1 && !whole_block && tile.as_ref().is_some_and(past_row_zero)
                    {
                        return gap(
                            x.span,
                            "a tile into a dim of size 1 over more rows (Helion broadcasts row 0)",
                        );
                    }
                    if let Some(b) = tile {
                        let Some(ld) = self.loops.get(&b) else {
                            return gap(span, format!("tile {b} used outside its loop"));
                        };
                        let part = match self.refs[k].block.get(dim) {
                            // D-1.5.1-19: the operand is the grid tile's block.
                            Some(BlockDim::Tiled { .. }) => IndexPart::Full,
                            Some(BlockDim::Whole) | None => {
                                let start = if ld.aligned {
                                    P::multiple_of(P::name(&ld.offset), ld.block.clone())
                                } else {
                                    P::name(&ld.offset)
                                };
                                IndexPart::Expr(P::ds(start, ld.block.clone()))
                            }
                        };
                        r.parts.push(part);
                        r.tiles.push((r.shape.len(), b));
                        r.shape.push(ld.bs);
                        r.newaxes.push(IndexPart::Full);
                    } else {
                        match self.types.of(x) {
                            Ty::Int(_) | Ty::GridIndex(_) => {
                                let e = self.lower_expr(x, env, out)?;
                                r.parts.push(IndexPart::Expr(e));
                            }
                            Ty::Tensor { .. } if !load => {
                                return gap(
                                    x.span,
                                    "a store or atomic through a tensor index (a scatter)",
                                );
                            }
                            Ty::HostTensor { .. }
                            | Ty::Tensor { .. }
                            | Ty::Float
                            | Ty::Bool
                            | Ty::Mask { .. }
                            | Ty::Tile(_) => {
                                return gap(x.span, "a host-tensor index that is not an int");
                            }
                        }
                    }
                }
            }
            dim += 1;
        }
        for &size in &shape[dim.min(shape.len())..] {
            r.shape.push(size);
            r.newaxes.push(IndexPart::Full);
            if pad[dim] > 0 {
                r.parts
                    .push(IndexPart::Expr(P::ds(P::Int(0), P::Int(size))));
            } else {
                r.parts.push(IndexPart::Full);
            }
            dim += 1;
        }
        if !r.newaxes.iter().any(|p| matches!(p, IndexPart::NewAxis)) {
            r.newaxes.clear();
        }
        Ok(r)
    }

    /// Whether masks are `jnp.where` (poison padding, or a partial BlockSpec block that holds
    /// poison, D-1.5.1-19): multiplication cannot hide poison (`NaN * 0 = NaN`).
    pub(super) fn where_masks(&self) -> bool {
        self.options.poison_padding || self.partial_blocks
    }

    /// `v` masked on `pos` of a rank-`rank` value by `mask` (spec §3.4): multiplied by
    /// `mask.astype(dtype)[expand]` (upstream), or `jnp.where(mask[expand], v, 0)` when
    /// [`Self::where_masks`].
    pub(super) fn apply_mask(&self, v: P, mask: &str, pos: usize, rank: usize, dtype: DType) -> P {
        let expand = |m: P| {
            if rank <= 1 {
                m
            } else {
                m.index(
                    (0..rank)
                        .map(|d| {
                            if d == pos {
                                IndexPart::Full
                            } else {
                                IndexPart::NewAxis
                            }
                        })
                        .collect(),
                )
            }
        };
        if self.where_masks() {
            Jnp::Where {
                cond: Box::new(expand(P::name(mask))),
                a: Box::new(v),
                b: Box::new(zero(dtype)),
            }
            .into()
        } else {
            P::Binary {
                op: pallas::BinOp::Mul,
                lhs: Box::new(v),
                rhs: Box::new(expand(P::name(mask).astype(dtype))),
            }
        }
    }

    /// A load (spec §1.5, §3.2).
    pub(super) fn lower_load(
        &mut self,
        e: &Expr,
        tensor: &str,
        indices: &[Index],
        env: &Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<P> {
        let k = self.host_ref(tensor, env, e.span)?;
        if let Some(s) = self.dma_active.get(&lang::ir::NodeKey::of(e)).cloned() {
            // A DMA-staged load reads the current slot (spec §3.2: `:` on DMA-staged
            // dims).
            let (slot, rank) = self.dma_current(&s);
            let parts = vec![IndexPart::Full; rank];
            if self.plan.resident(e).is_some() {
                return Ok(slot.at(parts));
            }
            let dtype = self.refs[k].dtype;
            let mut v = slot.index(parts);
            let stale = self
                .options
                .faults
                .has(crate::faults::Fault::Issue2214StaleTailRows);
            if let Some(m) = self.loops.get(&s.bid).and_then(|ld| ld.mask.clone())
                && !stale
            {
                v = self.apply_mask(v, &m, s.load.dim, rank, dtype);
            }
            return Ok(v);
        }
        if let Some(g) = self.lower_gather(e, k, indices, env, out)? {
            return Ok(g);
        }
        let r = self.ref_index(k, indices, true, env, out, e.span)?;
        let base = P::name(&self.refs[k].py);
        if self.plan.resident(e).is_some() {
            // A resident root: an address transform; the outer load's mask is not applied.
            if !r.newaxes.is_empty() {
                return gap(e.span, "a resident load with `None`");
            }
            return Ok(base.at(r.parts));
        }
        let dtype = self.refs[k].dtype;
        let rank = r.shape.len();
        let mut v = base.index(r.parts);
        // Fault #2214: the ordinary load's range mask is dropped, so rows past a partial tile's
        // end (padding, or the next segment's rows) leak in.
        let stale = self
            .options
            .faults
            .has(crate::faults::Fault::Issue2214StaleTailRows);
        for (pos, b) in r.tiles.into_iter().filter(|_| !stale) {
            if let Some(m) = self.loops.get(&b).and_then(|ld| ld.mask.clone()) {
                v = self.apply_mask(v, &m, pos, rank, dtype);
            }
        }
        if !r.newaxes.is_empty() {
            v = v.index(r.newaxes);
        }
        Ok(v)
    }

    /// A store (`atomic` = None) or an atomic read-modify-write (spec §1.6). Partial tiles
    /// keep the old contents through `jnp.where`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lower_store(
        &mut self,
        tensor: &str,
        indices: &[Index],
        value: &Expr,
        atomic: Option<(AtomicOp, Option<&Expr>)>,
        env: &Env,
        out: &mut Vec<PStmt>,
        span: Span,
    ) -> LResult<()> {
        let k = self.host_ref(tensor, env, span)?;
        let r = self.ref_index(k, indices, false, env, out, span)?;
        if !r.newaxes.is_empty() {
            return gap(span, "a store index with `None`");
        }
        let dtype = self.refs[k].dtype;
        let target = P::name(&self.refs[k].py);
        let v = self.lower_expr(value, env, out)?;
        let v = self.fit(v, self.types.of(value), &r.shape, dtype);
        let old = || target.clone().index(r.parts.clone());
        let new = match atomic {
            None => v,
            Some((op, expected)) => {
                let bin = |op: pallas::BinOp, v: P| P::Binary {
                    op,
                    lhs: Box::new(old()),
                    rhs: Box::new(v),
                };
                match op {
                    AtomicOp::Add => bin(pallas::BinOp::Add, v),
                    AtomicOp::And => bin(pallas::BinOp::BitAnd, v),
                    AtomicOp::Or => bin(pallas::BinOp::BitOr, v),
                    AtomicOp::Xor => bin(pallas::BinOp::BitXor, v),
                    AtomicOp::Max => Jnp::Maximum(Box::new(old()), Box::new(v)).into(),
                    AtomicOp::Min => Jnp::Minimum(Box::new(old()), Box::new(v)).into(),
                    AtomicOp::Xchg => v,
                    AtomicOp::Cas => {
                        let Some(x) = expected else {
                            return gap(span, "atomic_cas without `expected`");
                        };
                        let x = self.lower_expr(x, env, out)?;
                        let x = self.fit(x, self.types.of(value), &r.shape, dtype);
                        Jnp::Where {
                            cond: Box::new(old().compare(pallas::CmpOp::Eq, x)),
                            a: Box::new(v),
                            b: Box::new(old()),
                        }
                        .into()
                    }
                }
            }
        };
        let rank = r.shape.len();
        let mut cond: Option<P> = None;
        for &(pos, b) in &r.tiles {
            let Some(m) = self.loops.get(&b).and_then(|ld| ld.mask.clone()) else {
                continue;
            };
            let m = if rank <= 1 {
                P::name(m)
            } else {
                P::name(m).index(
                    (0..rank)
                        .map(|d| {
                            if d == pos {
                                IndexPart::Full
                            } else {
                                IndexPart::NewAxis
                            }
                        })
                        .collect(),
                )
            };
            cond = Some(match cond {
                None => m,
                Some(c) => P::Binary {
                    op: pallas::BinOp::BitAnd,
                    lhs: Box::new(c),
                    rhs: Box::new(m),
                },
            });
        }
        let new = match cond {
            None => new,
            Some(c) => Jnp::Where {
                cond: Box::new(c),
                a: Box::new(new),
                b: Box::new(old()),
            }
            .into(),
        };
        out.push(PStmt::Store {
            target,
            index: r.parts,
            value: new,
        });
        Ok(())
    }

    /// `v` (of type `ty`) made a `shape`-shaped `dtype` array for a Ref write.
    fn fit(&self, v: P, ty: &Ty, shape: &[i64], dtype: DType) -> P {
        match ty {
            Ty::Tensor { dtype: d, dims } => {
                let v = if *d != dtype { v.astype(dtype) } else { v };
                let same =
                    dims.len() == shape.len() && dims.iter().zip(shape).all(|(a, b)| a.size == *b);
                if same {
                    v
                } else {
                    Jnp::BroadcastTo {
                        x: Box::new(v),
                        shape: shape.to_vec(),
                    }
                    .into()
                }
            }
            Ty::HostTensor { .. }
            | Ty::Int(_)
            | Ty::Float
            | Ty::Bool
            | Ty::Mask { .. }
            | Ty::Tile(_)
            | Ty::GridIndex(_) => Jnp::Full {
                shape: shape.iter().map(|&s| P::Int(s)).collect(),
                value: Box::new(v),
                dtype,
            }
            .into(),
        }
    }
}
