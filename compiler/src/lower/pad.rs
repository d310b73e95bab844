//! Static bounds of every loop and the padding they imply (upstream's `_ds_pad_dims`, spec
//! §3.1): a dim indexed by a tile of block `bs` is read and written as `pl.ds(offset, bs)`, so
//! the array must extend to the furthest `offset + bs` the loop can reach; the launcher pads
//! the dim at its end by the difference.

use super::{LResult, Lowerer, gap};
use lang::ir::arith::ceil_div;
use lang::ir::hash::FastMap;
use lang::ir::sym::{Affine, BlockId, Sym};
use lang::ir::types::Ty;
use lang::ir::{Expr, ExprKind, Index, Stmt, StmtKind, TileAttr, walk};

/// Static facts about one loop dimension.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LoopBounds {
    /// Effective block size (1 for grids).
    pub bs: i64,
    /// Begin as an affine form (0 when absent), if affine.
    pub begin: Option<Affine>,
    /// End as an affine form, if affine.
    pub end: Option<Affine>,
    /// A lower bound of the begin.
    pub begin_lo: Option<i64>,
    /// An upper bound of the end.
    pub end_hi: Option<i64>,
}

impl LoopBounds {
    /// The static begin, if any.
    pub fn static_begin(&self) -> Option<i64> {
        self.begin.as_ref().and_then(Affine::as_const)
    }

    /// The static end, if any.
    pub fn static_end(&self) -> Option<i64> {
        self.end.as_ref().and_then(Affine::as_const)
    }

    /// One past the furthest element `pl.ds(offset, bs)` can touch, if bounded.
    pub fn reach(&self) -> Option<i64> {
        match (self.static_begin(), self.static_end()) {
            (Some(b), Some(e)) => {
                // `bs >= 1`: the division is total.
                let trips = if e > b {
                    ceil_div(e.saturating_sub(b), self.bs).unwrap_or(0)
                } else {
                    0
                };
                Some(b.saturating_add(trips.saturating_mul(self.bs)))
            }
            _ => self.end_hi.map(|hi| hi.saturating_add(self.bs - 1)),
        }
    }
}

/// Bounds of every loop dimension, by block id.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bounds {
    /// By block id.
    pub by_block: FastMap<BlockId, LoopBounds>,
}

impl Bounds {
    /// Interval of a symbol.
    fn sym(&self, s: Sym) -> (Option<i64>, Option<i64>) {
        let Some(b) = self.by_block.get(&s.block_id()) else {
            return (None, None);
        };
        match s {
            Sym::TileBegin(_) => (b.begin_lo, b.end_hi.map(|h| h - 1)),
            Sym::TileEnd(_) => (b.begin_lo, b.end_hi),
            Sym::BlockSize(_) => (Some(b.bs), Some(b.bs)),
            Sym::TileCount(_) | Sym::TileId(_) => (None, None),
        }
    }

    /// One past the furthest element a dynamic unroll of `lb` (an inner loop ending at an
    /// enclosing tile's `end`, from that tile's `begin` or a static begin: see
    /// `loops::unroll_of`) reaches: the codegen runs it as a static Python loop of
    /// `ceil(outer block / bs)` (or `ceil((outer end - begin) / bs)`) trips, each skipped by a
    /// `lax.cond` once past the end but still traced, so every trip's `pl.ds(offset, bs)` must
    /// lie inside the padded array even where the outer tile is partial. `None` for any other
    /// loop (campaign finding: `hl.tile(outer.begin, outer.end)` under an outer tile of 3 over
    /// 1 row read rows 1 and 2 of an unpadded `x` at trace time).
    pub fn dynamic_unroll_reach(&self, lb: &LoopBounds) -> Option<i64> {
        if lb.static_begin().is_some() && lb.static_end().is_some() {
            return None;
        }
        let Some(Sym::TileEnd(outer)) = lb.end.as_ref().and_then(Affine::as_sym) else {
            return None;
        };
        let o = self.by_block.get(&outer)?;
        let o_reach = o.reach()?;
        let trips = self.dynamic_unroll_trips(lb, outer)?;
        match (
            lb.begin.as_ref().and_then(Affine::as_sym),
            lb.static_begin(),
        ) {
            // From the outer tile's begin: the last outer tile begins at `o_reach - o.bs` at
            // most.
            (Some(Sym::TileBegin(b)), _) if b == outer => {
                Some((o_reach - o.bs).saturating_add(trips.saturating_mul(lb.bs)))
            }
            (_, Some(s)) => Some(s.saturating_add(trips.saturating_mul(lb.bs))),
            _ => None,
        }
    }

    /// The trips of the static loop a dynamic unroll of `lb` inside the tile loop `outer`
    /// becomes: `ceil(outer block / bs)` from the outer tile's begin, `ceil((outer end - begin)
    /// / bs)` from a static begin; `None` when the outer loop's end has no static bound. The
    /// one count of the codegen (`loops`) and the padding.
    pub fn dynamic_unroll_trips(&self, lb: &LoopBounds, outer: BlockId) -> Option<i64> {
        let o = self.by_block.get(&outer)?;
        match lb.static_begin() {
            None => ceil_div(o.bs, lb.bs),
            Some(s) => ceil_div(o.end_hi?.saturating_sub(s).max(0), lb.bs),
        }
    }

    /// Lower bound of an affine form.
    pub fn lo(&self, a: &Affine) -> Option<i64> {
        a.terms.iter().try_fold(a.constant, |acc, (&s, &k)| {
            let (lo, hi) = self.sym(s);
            let v = if k > 0 { lo? } else { hi? };
            acc.checked_add(k.checked_mul(v)?)
        })
    }

    /// Upper bound of an affine form.
    pub fn hi(&self, a: &Affine) -> Option<i64> {
        a.terms.iter().try_fold(a.constant, |acc, (&s, &k)| {
            let (lo, hi) = self.sym(s);
            let v = if k > 0 { hi? } else { lo? };
            acc.checked_add(k.checked_mul(v)?)
        })
    }

    /// Computes the bounds of every loop of the kernel, outermost first.
    pub fn of(case: &lang::ir::Case, types: &lang::ir::types::Types) -> Bounds {
        let mut bounds = Bounds::default();
        walk::each_stmt(&case.kernel.body, &mut |s| {
            let StmtKind::For(lp) = &s.kind else { return };
            for (dim, &id) in lp.dims.iter().zip(types.blocks.loop_ids(lp)) {
                let affine = |e: &Expr| match types.of(e) {
                    Ty::Int(a) => a.clone(),
                    Ty::GridIndex(b) => Some(Affine::sym(Sym::TileBegin(*b))),
                    Ty::HostTensor { .. }
                    | Ty::Tensor { .. }
                    | Ty::Float
                    | Ty::Bool
                    | Ty::Mask { .. }
                    | Ty::Tile(_) => None,
                };
                let begin = match &dim.begin {
                    Some(e) => affine(e),
                    None => Some(Affine::constant(0)),
                };
                let end = affine(&dim.end);
                let bs = match lp.kind {
                    lang::ir::LoopKind::Grid => 1,
                    lang::ir::LoopKind::Tile => types.block_size(id).max(1),
                };
                let begin_lo = begin.as_ref().and_then(|a| bounds.lo(a));
                let end_hi = end.as_ref().and_then(|a| bounds.hi(a));
                bounds.by_block.insert(
                    id,
                    LoopBounds {
                        bs,
                        begin,
                        end,
                        begin_lo,
                        end_hi,
                    },
                );
            }
        });
        bounds
    }
}

/// Sets `HostRef::pad` of every Ref from the tile accesses of the kernel.
pub(crate) fn apply(l: &mut Lowerer<'_>) -> LResult<()> {
    let mut needs: Vec<(usize, usize, BlockId, lang::ir::Span)> = Vec::new();
    fn entries(
        tensor: &str,
        indices: &[Index],
        tiles: &FastMap<&str, BlockId>,
        l: &Lowerer<'_>,
        out: &mut Vec<(usize, usize, BlockId, lang::ir::Span)>,
        span: lang::ir::Span,
    ) {
        let Some(&k) = l.host_names.get(tensor) else {
            return;
        };
        let mut dim = 0;
        for index in indices {
            let tile = match index {
                Index::Expr(Expr {
                    kind: ExprKind::Name(n),
                    ..
                }) => tiles.get(n.as_str()).copied(),
                Index::Expr(Expr {
                    kind:
                        ExprKind::TileAttr {
                            tile,
                            attr: TileAttr::Index,
                        },
                    ..
                }) => tiles.get(tile.as_str()).copied(),
                Index::Full
                | Index::NewAxis
                | Index::Int(_)
                | Index::Slice { .. }
                | Index::Expr(_) => None,
            };
            if let Some(b) = tile {
                out.push((k, dim, b, span));
            }
            match index {
                Index::NewAxis => {}
                Index::Full | Index::Int(_) | Index::Slice { .. } | Index::Expr(_) => dim += 1,
            }
        }
    }
    each_host_access(&l.case.kernel.body, l, &mut |a, tiles| {
        entries(a.tensor, a.indices, tiles, l, &mut needs, a.span)
    });
    for (k, dim, b, span) in needs {
        let Some(lb) = l.bounds.by_block.get(&b) else {
            return gap(span, format!("tile loop {b} has no bounds"));
        };
        let bs = lb.bs;
        let reach = match l.case.effective_loop_type() {
            lang::ir::LoopType::Unroll => l.bounds.dynamic_unroll_reach(lb).or(lb.reach()),
            lang::ir::LoopType::ForiLoop | lang::ir::LoopType::EmitPipeline => lb.reach(),
        };
        let r = &mut l.refs[k];
        if let (Some(size), Some(p)) = (r.shape.get(dim).copied(), r.pad.get_mut(dim)) {
            // A loop with data-dependent bounds: in a valid program every tile begins inside
            // the tensor, so its block reaches at most `bs - 1` past the last element.
            let reach = reach.unwrap_or_else(|| size.saturating_add(bs - 1));
            *p = (*p).max(reach.saturating_sub(size));
        }
    }
    Ok(())
}

/// One subscripted access of a host tensor in the kernel: a load (an expression) or a store or
/// atomic (a statement).
pub(super) struct HostAccess<'a> {
    pub tensor: &'a str,
    pub indices: &'a [Index],
    pub span: lang::ir::Span,
    pub load: bool,
}

/// Calls `f` on every host access of `stmts` in program order, with the tile names in scope
/// mapped to their block ids (a `hl.tile` loop binds its vars, a `hl.grid` loop or an
/// assignment shadows them): the one scope walk of the padding and the BlockSpec decisions.
pub(super) fn each_host_access<'a>(
    stmts: &'a [Stmt],
    l: &Lowerer<'_>,
    f: &mut dyn FnMut(HostAccess<'_>, &FastMap<&'a str, BlockId>),
) {
    fn go<'a>(
        stmts: &'a [Stmt],
        tiles: &mut FastMap<&'a str, BlockId>,
        l: &Lowerer<'_>,
        f: &mut dyn FnMut(HostAccess<'_>, &FastMap<&'a str, BlockId>),
    ) {
        for s in stmts {
            walk::stmt_exprs(s, &mut |e| {
                walk::each_expr(e, &mut |x| {
                    if let ExprKind::Load {
                        tensor, indices, ..
                    } = &x.kind
                    {
                        let a = HostAccess {
                            tensor,
                            indices,
                            span: x.span,
                            load: true,
                        };
                        f(a, tiles);
                    }
                })
            });
            match &s.kind {
                StmtKind::Store {
                    tensor, indices, ..
                }
                | StmtKind::Atomic {
                    tensor, indices, ..
                } => {
                    let a = HostAccess {
                        tensor,
                        indices,
                        span: s.span,
                        load: false,
                    };
                    f(a, tiles);
                }
                StmtKind::For(lp) => {
                    let saved = tiles.clone();
                    match lp.kind {
                        lang::ir::LoopKind::Tile => {
                            for (v, &id) in lp.vars.iter().zip(l.types.blocks.loop_ids(lp)) {
                                tiles.insert(v.as_str(), id);
                            }
                        }
                        lang::ir::LoopKind::Grid => {
                            for v in &lp.vars {
                                tiles.remove(v.as_str());
                            }
                        }
                    }
                    go(&lp.body, tiles, l, f);
                    *tiles = saved;
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    go(then_body, tiles, l, f);
                    go(else_body, tiles, l, f);
                }
                StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => {
                    tiles.remove(target.as_str());
                }
                StmtKind::Return(_) => {}
            }
        }
    }
    go(stmts, &mut FastMap::default(), l, f);
}
