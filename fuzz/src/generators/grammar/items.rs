//! Items: what one tile body does, drawn by weight per scope — a direct read, an inner tile
//! loop (over the live extent or a static one), a tail branch, a read through the inner tile, a
//! named-index branch, a trace store, a tile attribute used as a value, a whole-block consumer —
//! and paired reads (the product of two reads whose rows line up).

use super::{Gen, Scope, when};
use crate::generators::make::*;
use crate::generators::shape::{Dim, Val};
use arbitrary::Result;
use lang::ir::{BinOp, DType, Expr, Index, LoopType, Stmt, TileAttr};

/// The items of a scope ([`Gen::item`]), each where the scope allows it.
///
/// A direct read (a static selector): more on an unguarded block, where static selectors can
/// plan ([`Outer::unguarded`](super::Outer::unguarded), spec §2.4), less elsewhere.
const ITEM_DIRECT_READ_UNGUARDED: u32 = 4;
const ITEM_DIRECT_READ_GUARDED: u32 = 1;
/// An inner loop over the live extent, where loops may nest and the loop type allows it.
const ITEM_LIVE_LOOP: u32 = 5;
/// An inner loop over a static extent: more when every tile is full, and where the loop type
/// rules the live loop out (unroll, [`GenConfig::unroll_live_loop_percent`]) as much as the
/// live loop would weigh.
///
/// [`GenConfig::unroll_live_loop_percent`]: super::GenConfig::unroll_live_loop_percent
const ITEM_STATIC_LOOP_ALL_FULL: u32 = 2;
const ITEM_STATIC_LOOP_PARTIAL: u32 = 1;
const ITEM_STATIC_LOOP_NO_LIVE: u32 = 5;
/// A tail branch, outside any other tail branch.
const ITEM_TAIL_BRANCH: u32 = 3;
/// A read through the inner loop's tile, inside an inner loop.
const ITEM_INNER_READ: u32 = 6;
/// A named-index branch, inside an inner loop, weighs [`GenConfig::named_index_percent`]
/// divided by this.
///
/// [`GenConfig::named_index_percent`]: super::GenConfig::named_index_percent
const ITEM_NAMED_BRANCH_PERCENT_DIVISOR: u32 = 4;
/// A store of `acc` into the trace output, inside a block-1 inner loop.
const ITEM_TRACE_STORE: u32 = 2;

/// The value a tile-attribute item adds: mostly the attribute itself, now and then `live` or
/// the attribute floor-divided by a small int.
const TILE_ATTR_ITSELF: u32 = 6;
const TILE_ATTR_LIVE: u32 = 1;
const TILE_ATTR_FLOOR_DIV: u32 = 1;

impl Gen<'_, '_> {
    pub(super) fn item(&mut self, sc: &Scope) -> Result<Vec<Stmt>> {
        if self.cfg.tile_attr_values && self.pct(self.cfg.tile_attr_percent)? {
            return Ok(vec![self.tile_attr_item(sc)?]);
        }
        if self.cfg.whole_block && self.pct(self.cfg.whole_block_percent)? {
            return Ok(vec![self.whole_block_item(sc)?]);
        }
        let can_loop = sc.depth_left > 0 && sc.inner.is_none();
        if can_loop && !self.writes_x && self.pct(self.cfg.absolute_loop_percent)? {
            return Ok(vec![self.absolute_loop()?]);
        }
        if self.gathers && self.u.ratio(1, 2)? {
            return Ok(vec![self.gather_item()?]);
        }
        let live_ok =
            self.loop_type != LoopType::Unroll || self.pct(self.cfg.unroll_live_loop_percent)?;
        let inner_forms =
            self.cfg.tile_index || self.cfg.tile_begin_index || self.cfg.tile_index_offset;
        let weights = [
            if self.outer().unguarded {
                ITEM_DIRECT_READ_UNGUARDED
            } else {
                ITEM_DIRECT_READ_GUARDED
            },
            when(can_loop && live_ok && inner_forms, ITEM_LIVE_LOOP),
            match (can_loop && inner_forms, live_ok, self.outer().all_full) {
                (false, _, _) => 0,
                (true, true, true) => ITEM_STATIC_LOOP_ALL_FULL,
                (true, true, false) => ITEM_STATIC_LOOP_PARTIAL,
                (true, false, _) => ITEM_STATIC_LOOP_NO_LIVE,
            },
            when(self.cfg.tail && sc.tail.is_none(), ITEM_TAIL_BRANCH),
            when(sc.inner.is_some() && inner_forms, ITEM_INNER_READ),
            when(
                sc.inner.is_some() && self.cfg.named_index,
                self.cfg.named_index_percent as u32 / ITEM_NAMED_BRANCH_PERCENT_DIVISOR,
            ),
            when(
                sc.inner.as_ref().is_some_and(|i| i.block == 1) && self.trace,
                ITEM_TRACE_STORE,
            ),
        ];
        Ok(match self.weighted(&weights)? {
            0 => vec![self.direct_read(sc)?],
            1 => vec![self.live_loop(sc)?],
            2 => vec![self.static_loop(sc)?],
            3 => self.tail_item(sc)?,
            4 => vec![self.inner_read(sc)?],
            5 => self.named_branch(sc)?,
            _ => vec![self.trace_store(sc)?],
        })
    }

    /// `for inner in hl.tile(outer.begin, outer.end - k): acc = acc + <x[inner, ...] reduced>`:
    /// rows of the tensor itself, not of the block, from the outer tile's begin to its end or
    /// `k` rows short of it (`k` below the smallest live extent, so the loop never runs
    /// backwards; an empty range is Python's and Helion's empty loop). The rows lie inside the
    /// outer loop's range, so every read is in range.
    fn absolute_loop(&mut self) -> Result<Stmt> {
        let o = self.outer().clone();
        let k = self.range(0, o.live_min.saturating_sub(1).min(2))?;
        let tile_end = attr(&o.var, TileAttr::End);
        let end = if k == 0 {
            tile_end
        } else {
            sub(tile_end, int(k as i64))
        };
        let (_, block_expr) = self.inner_block(o.block)?;
        let var = self.fresh("inner");
        let update = self.rows_of_x_added(name(&var))?;
        Ok(tile_loop(
            &var,
            Some(attr(&o.var, TileAttr::Begin)),
            end,
            block_expr,
            vec![update],
        ))
    }

    /// `acc = acc + <x[idx[outer], ...] reduced>`: the outer tile's rows of `x` gathered
    /// through the index tensor `idx` ([`crate::generators::GenConfig::gather_percent`]),
    /// every index a row of `x`.
    fn gather_item(&mut self) -> Result<Stmt> {
        let o = self.outer().clone();
        self.rows_of_x_added(load("idx", vec![ix(name(&o.var))], false))
    }

    /// `acc = acc + <x[rows, ...] reduced>`: the rows `rows` selects of `x` itself (a tile, or
    /// an index tensor), its other dims whole.
    fn rows_of_x_added(&mut self, rows: Expr) -> Result<Stmt> {
        let idx: Vec<Index> = std::iter::once(ix(rows))
            .chain((1..self.x_shape.len()).map(|_| Index::Full))
            .collect();
        let dims: Vec<Dim> = std::iter::once(Dim::Rows)
            .chain(self.x_shape[1..].iter().map(|&d| Dim::Fixed(d)))
            .collect();
        let read = self.reduce(load("x", self.trim(idx), false), Val::new(dims))?;
        self.acc_update(read)
    }

    pub(super) fn tile_attr_item(&mut self, sc: &Scope) -> Result<Stmt> {
        let o = self.outer().clone();
        let var = match &sc.inner {
            Some(i) if self.u.ratio(1, 2)? => i.var.clone(),
            _ => o.var.clone(),
        };
        let a = *self.u.choose(&[
            TileAttr::Begin,
            TileAttr::End,
            TileAttr::Count,
            TileAttr::Id,
            TileAttr::BlockSize,
        ])?;
        let v = match self.weighted(&[TILE_ATTR_ITSELF, TILE_ATTR_LIVE, TILE_ATTR_FLOOR_DIV])? {
            0 => attr(&var, a),
            1 => name(&o.live),
            _ => bin(
                BinOp::FloorDiv,
                attr(&var, a),
                int(self.range(1, 3)? as i64),
            ),
        };
        self.acc_fold(v)
    }

    fn whole_block_item(&mut self, sc: &Scope) -> Result<Stmt> {
        let base = self.outer().bases[0].clone();
        let whole = self.reduce(name(&base.name), base.val.clone())?;
        let v = if self.u.ratio(2, 3)? {
            // A narrowing consumer beside the whole-block one (`x_block.sum(0) + x_block[1]`).
            let narrow = self.read_expr(sc, false)?;
            add(whole, narrow)
        } else {
            whole
        };
        self.acc_update(v)
    }

    /// `acc = acc + <read>` of a block without the innermost loop's tile (static indices,
    /// slices or an enclosing tile).
    pub(super) fn direct_read(&mut self, sc: &Scope) -> Result<Stmt> {
        let v = self.read_or_pair(sc, false)?;
        self.acc_update(v)
    }

    pub(super) fn inner_read(&mut self, sc: &Scope) -> Result<Stmt> {
        let v = self.read_or_pair(sc, true)?;
        self.acc_update(v)
    }

    /// A read ([`Gen::read_expr`]) or, at [`GenConfig::paired_read_percent`], a paired read.
    ///
    /// [`GenConfig::paired_read_percent`]: super::GenConfig::paired_read_percent
    fn read_or_pair(&mut self, sc: &Scope, through_inner: bool) -> Result<Expr> {
        if self.cfg.paired_reads && self.pct(self.cfg.paired_read_percent)? {
            return self.paired_read(sc, through_inner);
        }
        self.read_expr(sc, through_inner)
    }

    /// `base[.., a, ..].float() * base[.., b, ..].float()`, reduced to the accumulator's shape:
    /// two selectors on the row dim of one base that select the same number of rows (two
    /// selectors of the innermost tile, `local.index + -1` beside `local.index`; or two static
    /// windows of one width), multiplied element by element before the rows are summed. A sum
    /// of each read alone is blind to *which* rows a run reads as long as it reads a
    /// permutation of the right ones (a rotated run, a dropped offset inside one tile: helion
    /// #2006); the product pairs row `i` of one run with row `i` of the other, so it is not.
    fn paired_read(&mut self, sc: &Scope, through_inner: bool) -> Result<Expr> {
        let base = self.pick_base()?;
        let ax = base.val.rows_axis().unwrap_or(0);
        let (a, b) = match (&sc.inner, through_inner) {
            (Some(inner), true) => {
                let inner = inner.clone();
                let (a, a_scalar) = self.inner_selector(&inner)?;
                let (b, b_scalar) = self.inner_selector(&inner)?;
                // A scalar beside a run would broadcast against the wrong dim when the rows
                // are not the leading dim: square the first read instead.
                if a_scalar == b_scalar || ax == 0 {
                    (a, b)
                } else {
                    (a.clone(), a)
                }
            }
            _ => {
                // Static windows the live rows always hold (on a guarded block Helion refuses
                // them, which is a verdict worth having too).
                let rows = self.guaranteed_rows(sc);
                let w = self.range(1, rows)?;
                let i = self.range(0, rows - w)? as i64;
                let j = self.range(0, rows - w)? as i64;
                if w == 1 && self.cfg.int_index && self.u.ratio(1, 2)? {
                    (Index::Int(i), Index::Int(j))
                } else {
                    let window = |s: i64| Index::Slice {
                        start: Some(int(s)),
                        stop: Some(int(s + w as i64)),
                        step: None,
                    };
                    (window(i), window(j))
                }
            }
        };
        let dim_a = self.select_dim(&a, base.val.dims[ax]);
        let dim_b = self.select_dim(&b, base.val.dims[ax]);
        // The product's shape: the base's, with the row dim as the selectors leave it (a
        // scalar beside a run broadcasts, and only happens with the rows leading).
        let mut dims = base.val.dims.clone();
        match dim_a.or(dim_b) {
            Some(d) => dims[ax] = d,
            None => {
                dims.remove(ax);
            }
        }
        let read = |sel: Index, g: &Self| {
            let mut entries: Vec<Index> = (0..base.val.rank()).map(|_| Index::Full).collect();
            entries[ax] = sel;
            cast(subscript(name(&base.name), g.trim(entries)), DType::Float32)
        };
        let e = bin(BinOp::Mul, read(a, self), read(b, self));
        self.exact_products = true;
        self.reduce(e, Val::new(dims))
    }
}
