//! Subscripts and index forms: which base an item reads, its row selector (through the inner
//! tile, a constant one, or one Helion refuses), selectors on fixed dims, and the subscript
//! built from them — which dim each entry leaves, whether the result stays contiguous, and the
//! reduction back to the accumulator's shape.

use super::{Base, Gen, Inner, Scope, when};
use crate::generators::admissible::contiguous_after;
use crate::generators::make::*;
use crate::generators::shape::{Dim, Val, reduce_to, slice_len};
use arbitrary::Result;
use lang::ir::arith::ceil_div;
use lang::ir::{Expr, ExprKind, Index, TileAttr};

/// A selector through the inner tile: `local.index` (only where the loop has no shift to
/// make up), `local.index + k`, and `local.begin`: as much as `local.index` in a block-1 loop
/// (where the two pick the same row), less elsewhere.
const INNER_INDEX: u32 = 4;
const INNER_INDEX_OFFSET: u32 = 2;
const INNER_BEGIN_BLOCK_1: u32 = 4;
const INNER_BEGIN: u32 = 1;

/// A constant row selector Helion refuses. Negative bounds weigh double: they are how Python
/// code names the last rows (`x[-1]`, `x[-3:-1]`), the refused idiom a kernel author reaches
/// for first. Then a slice past the block, an open slice, a stepped slice and an empty one.
const WILD_ROW_NEGATIVE_INT: u32 = 2;
const WILD_ROW_NEGATIVE_SLICE: u32 = 2;
const WILD_ROW_PAST_BLOCK: u32 = 1;
const WILD_ROW_OPEN_SLICE: u32 = 1;
const WILD_ROW_STEPPED_SLICE: u32 = 1;
const WILD_ROW_EMPTY_SLICE: u32 = 1;

/// A constant row selector: ints and static slices alike and most of all (a slice stands in
/// when neither ints nor iotas are enabled), then the iotas `hl.arange(a, b)`,
/// `a + hl.arange(n)` and `hl.arange(a, b, s)`.
const ROW_INT: u32 = 7;
const ROW_SLICE: u32 = 7;
const ROW_ARANGE: u32 = 1;
const ROW_OFFSET_ARANGE: u32 = 1;
const ROW_STRIDED_ARANGE: u32 = 1;

/// A selector on a fixed dim: an int, a slice (always allowed) or an iota.
const FIXED_INT: u32 = 3;
const FIXED_SLICE: u32 = 3;
const FIXED_ARANGE: u32 = 1;

/// A slice of a fixed dim: mostly its full width (aligned on every dim), then one element, or
/// a run.
const FIXED_SLICE_FULL: u32 = 3;
const FIXED_SLICE_ONE: u32 = 1;
const FIXED_SLICE_RUN: u32 = 1;

impl Gen<'_, '_> {
    pub(super) fn pick_base(&mut self) -> Result<Base> {
        let bases: Vec<Base> = self
            .outer()
            .bases
            .iter()
            .filter(|b| b.val.rows_count() == 1)
            .cloned()
            .collect();
        // A view bound before the items is mostly read (an unread one is a whole consumer).
        let i = if bases.len() > 1 && self.u.ratio(3, 4)? {
            self.range(1, bases.len() - 1)?
        } else {
            0
        };
        Ok(bases[i].clone())
    }

    /// A selector through the inner loop's tile: `local.index`, `local.index + k`, `local.begin`.
    pub(super) fn inner_selector(&mut self, inner: &Inner) -> Result<(Index, bool)> {
        let v = &inner.var;
        let weights = [
            when(self.cfg.tile_index && inner.shift == 0, INNER_INDEX),
            when(self.cfg.tile_index_offset, INNER_INDEX_OFFSET),
            match (self.cfg.tile_begin_index, inner.block) {
                (false, _) => 0,
                (true, 1) => INNER_BEGIN_BLOCK_1,
                (true, _) => INNER_BEGIN,
            },
        ];
        Ok(match self.weighted(&weights)? {
            0 if weights[0] > 0 => (ix(attr(v, TileAttr::Index)), false),
            1 if weights[1] > 0 => {
                let live_min = self.outer().live_min;
                let k = if inner.shift > 0 {
                    self.range(0, inner.shift)? as i64
                } else if self.u.ratio(1, 3)? {
                    // `t.index + -k`: torch wraps the first rows' negative indices to the last
                    // rows (every tile has at least `live_min` of them), so the case is valid
                    // eagerly while the lowering must refuse the shifted run (the way a
                    // dropped offset, helion #2006, or an unmasked gather, D11, shows).
                    -(self.range(1, live_min.clamp(1, 3))? as i64)
                } else {
                    0
                };
                (ix(add(attr(v, TileAttr::Index), int(k))), false)
            }
            2 if weights[2] > 0 => (ix(attr(v, TileAttr::Begin)), true),
            _ => (ix(attr(v, TileAttr::Index)), false),
        })
    }

    /// A read of a base, reduced to the accumulator's shape. With `through_inner`, the row
    /// selector comes from the innermost tile loop.
    pub(super) fn read_expr(&mut self, sc: &Scope, through_inner: bool) -> Result<Expr> {
        let base = self.pick_base()?;
        let rows_ax = base.val.rows_axis().unwrap_or(0);
        if through_inner && let Some(inner) = sc.inner.clone() {
            let (sel, _) = self.inner_selector(&inner)?;
            return self.read_with(sc, &base, rows_ax, sel);
        }
        // A static selector on the row dim, or on another dim.
        let other_dims: Vec<usize> = (0..base.val.rank()).filter(|&a| a != rows_ax).collect();
        // Reads of other dims leave the row dim (and its live guard) whole: Helion plans them
        // only on unguarded blocks.
        let on_rows = other_dims.is_empty()
            || if self.outer().unguarded {
                self.u.ratio(5, 6)?
            } else {
                self.u.ratio(15, 16)?
            };
        if on_rows {
            let sel = self.static_row_selector(sc)?;
            self.read_with(sc, &base, rows_ax, sel)
        } else {
            let ax = *self.u.choose(&other_dims)?;
            let Dim::Fixed(d) = base.val.dims[ax] else {
                unreachable!("only the row dim varies")
            };
            let sel = self.fixed_selector(d)?;
            self.read_with(sc, &base, ax, sel)
        }
    }

    /// The rows every tile is guaranteed to have here.
    pub(super) fn guaranteed_rows(&self, sc: &Scope) -> usize {
        let o = self.outer();
        o.live_min.max(sc.tail.unwrap_or(0))
    }

    /// A constant selector on the row dim: an int, a slice, an iota (static or strided), or one
    /// Helion refuses (negative, open, stepped, past the block).
    fn static_row_selector(&mut self, sc: &Scope) -> Result<Index> {
        let rows = self.guaranteed_rows(sc);
        let block = self.outer().block;
        if self.wild()? {
            return Ok(
                match self.weighted(&[
                    WILD_ROW_NEGATIVE_INT,
                    WILD_ROW_NEGATIVE_SLICE,
                    WILD_ROW_PAST_BLOCK,
                    WILD_ROW_OPEN_SLICE,
                    WILD_ROW_STEPPED_SLICE,
                    WILD_ROW_EMPTY_SLICE,
                ])? {
                    0 => Index::Int(-(self.range(1, rows)? as i64)),
                    1 => self.negative_slice(block, true)?,
                    2 => {
                        let a = self.range(0, block - 1)? as i64;
                        let b = (block + self.range(1, 8)?) as i64;
                        Index::Slice {
                            start: Some(int(a)),
                            stop: Some(int(b)),
                            step: None,
                        }
                    }
                    3 => {
                        let a = self.range(0, block)? as i64;
                        if self.u.ratio(1, 2)? {
                            Index::Slice {
                                start: Some(int(a)),
                                stop: None,
                                step: None,
                            }
                        } else {
                            Index::Slice {
                                start: None,
                                stop: Some(int(a.max(1))),
                                step: None,
                            }
                        }
                    }
                    4 => {
                        let b = self.range(1, block)? as i64;
                        Index::Slice {
                            start: Some(int(0)),
                            stop: Some(int(b)),
                            step: Some(int(self.range(2, 3)? as i64)),
                        }
                    }
                    _ => {
                        let a = self.range(0, block)? as i64;
                        Index::Slice {
                            start: Some(int(a)),
                            stop: Some(int(a)),
                            step: None,
                        }
                    }
                },
            );
        }
        let (int_ok, arange_ok) = (self.cfg.int_index, self.cfg.arange_index);
        let weights = [
            when(int_ok, ROW_INT),
            when(self.cfg.static_slice || !(int_ok || arange_ok), ROW_SLICE),
            when(arange_ok, ROW_ARANGE),
            when(arange_ok, ROW_OFFSET_ARANGE),
            when(arange_ok, ROW_STRIDED_ARANGE),
        ];
        Ok(match self.weighted(&weights)? {
            0 => Index::Int(self.range(0, rows - 1)? as i64),
            1 => {
                let a = self.range(0, block - 1)?;
                let b = self.range(a + 1, block)?;
                Index::Slice {
                    start: Some(int(a as i64)),
                    stop: Some(int(b as i64)),
                    step: None,
                }
            }
            2 => {
                let a = self.range(0, rows - 1)?;
                let b = self.range(a + 1, rows)?;
                ix(arange(Some(int(a as i64)), int(b as i64), None))
            }
            3 => {
                // `a + hl.arange(n)` (a static index for Helion's value fallback).
                let n = self.range(1, rows)?;
                let a = self.range(0, rows - n)?;
                ix(add(int(a as i64), arange(None, int(n as i64), None)))
            }
            _ => {
                let s = self.range(2, 3)?;
                let a = self.range(0, rows - 1)?;
                let b = self.range(a + 1, rows)?;
                ix(arange(
                    Some(int(a as i64)),
                    int(b as i64),
                    Some(int(s as i64)),
                ))
            }
        })
    }

    /// A slice with a negative start on a dim of `d` elements (the block's rows when `rows`,
    /// else a fixed dim), as Python code writes one: `[-k:-j]`, `[-k:b]`. Helion refuses a
    /// negative start at trace time (spec D8: the dim's size is unknown there, so the bound
    /// cannot be normalized). Mostly the raw width `stop - start` stays within `d`, so that a
    /// lowering that let the bound through would take it to the planner as a run inside the
    /// block (and read at a negative offset) rather than refuse it as too wide; sometimes it
    /// is wider, as `[-3:2]` on four rows is. Torch normalizes `[-k:b]` to `[d-k:b]`: on the
    /// row dim an empty result is fine (its sum is zeros), on a fixed dim the slice is kept
    /// non-empty so the value keeps a shape later views can name.
    fn negative_slice(&mut self, d: usize, rows: bool) -> Result<Index> {
        let k = self.range(1, d)?;
        let slice = |a: usize, b: i64| Index::Slice {
            start: Some(int(-(a as i64))),
            stop: Some(int(b)),
            step: None,
        };
        if k >= 2 && self.u.ratio(2, 3)? {
            return Ok(slice(k, -(self.range(1, k - 1)? as i64)));
        }
        let stop = if rows && self.u.ratio(2, 3)? {
            self.range(0, d - k)?
        } else {
            self.range(d - k + 1, d)?
        };
        Ok(slice(k, stop as i64))
    }

    /// A selector on a fixed dim of size `d`.
    fn fixed_selector(&mut self, d: usize) -> Result<Index> {
        if self.wild()? {
            return Ok(match self.range(0, 2)? {
                0 => Index::Int(-(self.range(1, d)? as i64)),
                1 => self.negative_slice(d, false)?,
                _ => Index::Slice {
                    start: Some(int(0)),
                    stop: Some(int((d + self.range(1, 128)?) as i64)),
                    step: None,
                },
            });
        }
        let weights = [
            when(self.cfg.int_index, FIXED_INT),
            FIXED_SLICE,
            when(self.cfg.arange_index, FIXED_ARANGE),
        ];
        Ok(match self.weighted(&weights)? {
            0 => Index::Int(self.range(0, d - 1)? as i64),
            1 => {
                let (a, b) =
                    match self.weighted(&[FIXED_SLICE_FULL, FIXED_SLICE_ONE, FIXED_SLICE_RUN])? {
                        0 => (0, d),
                        1 => {
                            let a = self.range(0, d - 1)?;
                            (a, a + 1)
                        }
                        _ => {
                            let a = self.range(0, d - 1)?;
                            (a, self.range(a + 1, d)?)
                        }
                    };
                Index::Slice {
                    start: Some(int(a as i64)),
                    stop: Some(int(b as i64)),
                    step: None,
                }
            }
            _ => {
                let a = self.range(0, d - 1)?;
                let b = self.range(a + 1, d)?;
                ix(arange(Some(int(a as i64)), int(b as i64), None))
            }
        })
    }

    /// `base[entries]` with `sel` at axis `ax`, `:` elsewhere, sometimes a `None` and (wild) a
    /// second narrowing entry, then optional views, permutes and a nested static selection,
    /// reduced to the accumulator's shape.
    pub(super) fn read_with(
        &mut self,
        sc: &Scope,
        base: &Base,
        ax: usize,
        sel: Index,
    ) -> Result<Expr> {
        let _ = sc;
        let mut base_e = name(&base.name);
        let mut val = base.val.clone();
        let mut ax = ax;
        // An inline permute before narrowing (Helion refuses narrowing a permuted Ref).
        if self.cfg.permute && val.rank() >= 2 && self.pct(self.cfg.permute_percent)? {
            let mut perm: Vec<usize> = (0..val.rank()).collect();
            let j = self.range(0, perm.len() - 1)?;
            perm.swap(ax, j);
            if j == ax {
                let k = (ax + 1) % perm.len();
                perm.swap(ax, k);
            }
            base_e = permute(base_e, perm.iter().map(|&p| p as i64).collect());
            ax = perm.iter().position(|&p| p == ax).unwrap_or(0);
            val = Val {
                dims: perm.iter().map(|&p| val.dims[p]).collect(),
                contiguous: false,
            };
        }
        let rank = val.rank();
        let mut entries: Vec<Index> = (0..rank).map(|_| Index::Full).collect();
        let mut dims: Vec<Option<Dim>> = val.dims.iter().map(|d| Some(*d)).collect();
        dims[ax] = self.select_dim(&sel, val.dims[ax]);
        entries[ax] = sel;
        // Wild: a second narrowing entry (Helion's trace refuses more than one).
        // (Not beside a tensor index: NumPy and PyTorch place the result dims differently.)
        let others: Vec<usize> = (0..rank)
            .filter(|&a| a != ax && matches!(val.dims[a], Dim::Fixed(_)))
            .collect();
        let primary_advanced = matches!(&entries[ax], Index::Expr(x) if !self.is_scalar(x));
        if !others.is_empty() && !primary_advanced && self.wild()? && self.u.ratio(1, 3)? {
            let a = *self.u.choose(&others)?;
            if let Dim::Fixed(d) = val.dims[a] {
                entries[a] = Index::Int(self.range(0, d - 1)? as i64);
                dims[a] = None;
            }
        }
        let mut out_dims: Vec<Dim> = dims.into_iter().flatten().collect();
        if self.cfg.new_axis && self.u.ratio(1, 24)? {
            let p = self.range(0, entries.len())?;
            entries.insert(p, Index::NewAxis);
            // The output position of the new axis counts the entries before it that keep a dim.
            let out_pos = entries[..p]
                .iter()
                .filter(|e| {
                    !matches!(e, Index::Int(_)) && !matches!(e, Index::Expr(x) if self.is_scalar(x))
                })
                .count();
            out_dims.insert(out_pos.min(out_dims.len()), Dim::Fixed(1));
        }
        let contiguous = contiguous_after(&entries, val.contiguous, &|x| !self.is_scalar(x));
        let entries = self.trim(entries);
        let mut e = subscript(base_e, entries);
        let mut v = Val {
            dims: out_dims,
            contiguous,
        };
        // Post-narrowing views and a nested static selection (spec example 4).
        if self.cfg.views && self.pct(self.cfg.view_percent)? {
            let (ne, nv) = self.view_chain(e, v, 2)?;
            e = ne;
            v = nv;
            let fixed: Vec<usize> = (0..v.rank())
                .filter(|&a| matches!(v.dims[a], Dim::Fixed(_)))
                .collect();
            if !fixed.is_empty() && self.u.ratio(1, 2)? {
                let a = *self.u.choose(&fixed)?;
                let Dim::Fixed(d) = v.dims[a] else {
                    unreachable!("filtered to fixed dims")
                };
                let sel = if self.wild()? {
                    self.negative_slice(d, false)?
                } else {
                    let lo = self.range(0, d - 1)?;
                    let hi = self.range(lo + 1, d)?;
                    Index::Slice {
                        start: Some(int(lo as i64)),
                        stop: Some(int(hi as i64)),
                        step: None,
                    }
                };
                let Some(dim) = self.select_dim(&sel, Dim::Fixed(d)) else {
                    unreachable!("a slice keeps its dim")
                };
                let mut idx: Vec<Index> = (0..v.rank()).map(|_| Index::Full).collect();
                idx[a] = sel;
                v.dims[a] = dim;
                v.contiguous = v.contiguous && a == 0;
                e = subscript(e, self.trim(idx));
            }
        }
        self.reduce(e, v)
    }

    /// The dim a selector leaves: none for a scalar, a run of rows, or a fixed count.
    pub(super) fn select_dim(&self, sel: &Index, d: Dim) -> Option<Dim> {
        match sel {
            Index::Full => Some(d),
            Index::NewAxis => Some(d),
            Index::Int(_) => None,
            Index::Slice { start, stop, step } => {
                let lit = |e: &Option<Expr>| e.as_ref().map(|x| x.as_int().ok_or(())).transpose();
                match (d, lit(start), lit(stop), lit(step)) {
                    (Dim::Fixed(n), Ok(a), Ok(b), Ok(s)) => {
                        Some(Dim::Fixed(slice_len(a, b, s.unwrap_or(1).max(1), n)))
                    }
                    _ => Some(Dim::Rows),
                }
            }
            Index::Expr(e) => {
                if self.is_scalar(e) {
                    None
                } else {
                    match iota_len(e) {
                        Some(n) => Some(Dim::Fixed(n)),
                        None => Some(Dim::Rows),
                    }
                }
            }
        }
    }

    /// Whether an index expression is a scalar (drops its dim), names bound to scalars included.
    fn is_scalar(&self, e: &Expr) -> bool {
        if let ExprKind::Name(n) = &e.kind {
            self.scalar_names.iter().any(|s| s == n)
        } else {
            is_scalar_expr(e)
        }
    }

    pub(super) fn reduce(&mut self, e: Expr, v: Val) -> Result<Expr> {
        let acc = self.acc_shape.clone();
        let mut bits = Vec::new();
        for _ in 0..4 {
            bits.push(self.u.ratio(1, 2)?);
        }
        let mut it = bits.into_iter();
        Ok(reduce_to(e, v, &acc, &mut || it.next().unwrap_or(false)))
    }
}

/// Whether an index expression is a scalar (an int, a tile begin): it drops its dim.
fn is_scalar_expr(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) => true,
        ExprKind::TileAttr { attr, .. } => *attr != TileAttr::Index,
        ExprKind::Binary { lhs, rhs, .. } => is_scalar_expr(lhs) && is_scalar_expr(rhs),
        ExprKind::Name(_)
        | ExprKind::Float(_)
        | ExprKind::Size { .. }
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

/// The length of a static iota index (`hl.arange(a, b[, s])`, `a + hl.arange(n)`).
fn iota_len(e: &Expr) -> Option<usize> {
    match &e.kind {
        ExprKind::Arange { start, end, step } => {
            let a = start.as_deref().map_or(Some(0), Expr::as_int)?;
            let b = end.as_int()?;
            let s = step.as_deref().map_or(Some(1), Expr::as_int)?;
            if s <= 0 {
                return None;
            }
            Some(if b > a {
                ceil_div(b - a, s)? as usize
            } else {
                0
            })
        }
        ExprKind::Binary { lhs, rhs, .. } => iota_len(lhs).or_else(|| iota_len(rhs)),
        ExprKind::Name(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Size { .. }
        | ExprKind::TileAttr { .. }
        | ExprKind::Compare { .. }
        | ExprKind::Load { .. }
        | ExprKind::Subscript { .. }
        | ExprKind::Zeros { .. }
        | ExprKind::Full { .. }
        | ExprKind::Cast { .. }
        | ExprKind::Sum { .. }
        | ExprKind::View { .. }
        | ExprKind::Permute { .. }
        | ExprKind::Op { .. }
        | ExprKind::Alloc { .. } => None,
    }
}
