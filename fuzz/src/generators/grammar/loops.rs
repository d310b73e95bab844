//! Inner tile loops and branches: the blocks of loops (fixed `block_size=` or a config slot),
//! loops over the live extent (`hl.tile(live - k)`) and over static extents, their bodies, tail
//! branches under `if live >= w:` and branches on a name bound to an inner index.

use super::{Gen, Inner, Scope, when};
use crate::generators::make::*;
use arbitrary::Result;
use lang::ir::{CmpOp, Expr, Index, Stmt, TileAttr};

/// The row selector of a tail branch: mostly the slice `live - w : live`, then
/// `hl.arange(live - w, live)`, the same iota bound to a name first, and a strided static iota
/// below `w`.
const TAIL_SLICE: u32 = 5;
const TAIL_ARANGE: u32 = 2;
const TAIL_NAMED_ARANGE: u32 = 1;
const TAIL_STRIDED_ARANGE: u32 = 1;

/// The condition of a named-index branch: mostly `live >= c`, then `local.count >= 1`,
/// `live != c`, `c < live`, `live > c` and `live == c`. The subscript under the branch does
/// not depend on the condition, so Helion lowers every comparison here; the last two are the
/// only lowered cases with `>` and `==` (a tail branch's condition must be `live >= w` exactly,
/// and its other forms are refusal tests), which Helion's reach table showed as generator gaps.
const NAMED_BRANCH_LIVE_GE: u32 = 6;
const NAMED_BRANCH_COUNT_GE_1: u32 = 2;
const NAMED_BRANCH_LIVE_NE: u32 = 1;
const NAMED_BRANCH_LIVE_GT_SWAPPED: u32 = 1;
const NAMED_BRANCH_LIVE_GT: u32 = 1;
const NAMED_BRANCH_LIVE_EQ: u32 = 1;

impl Gen<'_, '_> {
    /// `block_size=<b>` or a new config slot holding `b`.
    pub(super) fn block_expr(&mut self, b: usize) -> Result<Option<Expr>> {
        if self.pct(self.cfg.fixed_block_percent)?
            || (!b.is_power_of_two() && !self.pct(self.cfg.non_power_of_two_config_percent)?)
        {
            Ok(Some(int(b as i64)))
        } else {
            self.block_sizes.push(b as i64);
            Ok(None)
        }
    }

    /// The inner loop's block: a fixed `block_size=` or a config slot.
    /// Mostly a divisor of `extent_max` (Helion needs the run width to divide the block).
    pub(super) fn inner_block(&mut self, extent_max: usize) -> Result<(usize, Option<Expr>)> {
        let hi = extent_max.clamp(1, 4);
        let divisors: Vec<usize> = (1..=hi).filter(|d| extent_max.is_multiple_of(*d)).collect();
        let b = if self.u.ratio(1, 3)? {
            1
        } else if self.u.ratio(5, 6)? {
            *self.u.choose(&divisors)?
        } else {
            self.range(1, hi)?
        };
        let e = self.block_expr(b)?;
        Ok((b, e))
    }

    /// `for local in hl.tile(live[ - k]):` with reads of the block through `local`.
    pub(super) fn live_loop(&mut self, sc: &Scope) -> Result<Stmt> {
        let o = self.outer().clone();
        let shift = if self.cfg.tile_index_offset && o.live_min >= 2 && self.u.ratio(1, 4)? {
            self.range(1, o.live_min - 1)?
        } else {
            0
        };
        let end = if shift > 0 {
            sub(name(&o.live), int(shift as i64))
        } else {
            name(&o.live)
        };
        let (block, block_expr) = self.inner_block(o.block)?;
        let var = self.fresh("local");
        let inner = Inner {
            var: var.clone(),
            shift,
            block,
        };
        // Helion refuses every read through a shifted live loop's tile (`local.index + k`: a
        // shifted tile run; `local.index`: a live extent that does not match the source tile),
        // so with those reads alone the loop never reached its code generation (0 of 19 cases
        // in a 600-case Helion campaign, `--seed 3031`). Half of them read the block without
        // the tile first, as a repeat loop, which Helion lowers.
        let through_inner = shift == 0 || self.u.ratio(1, 2)?;
        let body = self.loop_body(sc, inner, through_inner)?;
        Ok(tile_loop(&var, None, end, block_expr, body))
    }

    /// `for local in hl.tile(S):` over a static extent that every tile has rows for.
    pub(super) fn static_loop(&mut self, sc: &Scope) -> Result<Stmt> {
        let o = self.outer().clone();
        let extent = if o.all_full && self.u.ratio(4, 5)? {
            o.block
        } else {
            self.range(1, o.live_min)?
        };
        let room = o.live_min.max(if o.all_full { o.block } else { 0 }) - extent;
        let shift = if self.cfg.tile_index_offset && room > 0 && self.u.ratio(1, 4)? {
            self.range(1, room)?
        } else {
            0
        };
        let (block, block_expr) = self.inner_block(extent)?;
        let var = self.fresh("local");
        let inner = Inner {
            var: var.clone(),
            shift,
            block,
        };
        let body = self.loop_body(sc, inner, true)?;
        let begin = self.u.ratio(1, 8)?.then(|| int(0));
        Ok(tile_loop(&var, begin, int(extent as i64), block_expr, body))
    }

    /// The body of an inner loop; its first item reads through the loop's tile when
    /// `through_inner`, so the loop means something, else the block without it.
    fn loop_body(&mut self, sc: &Scope, inner: Inner, through_inner: bool) -> Result<Vec<Stmt>> {
        let inner_sc = Scope {
            inner: Some(inner),
            tail: sc.tail,
            depth_left: sc.depth_left - 1,
        };
        let n = self.range(1, 2)?;
        let mut body = Vec::new();
        body.push(if through_inner {
            self.inner_read(&inner_sc)?
        } else {
            self.direct_read(&inner_sc)?
        });
        for _ in 1..n {
            body.extend(self.item(&inner_sc)?);
        }
        Ok(body)
    }

    /// `if live >= w:` with a tail read (and sometimes an `else`).
    pub(super) fn tail_item(&mut self, sc: &Scope) -> Result<Vec<Stmt>> {
        let o = self.outer().clone();
        let w = self.range(1, o.block.max(1))?;
        let live = name(&o.live);
        // Conditions that imply `live >= w` (exact first; the others Helion does not accept).
        let wild = self.wild()?;
        let (cond, in_else) = if !wild {
            (cmp(CmpOp::Ge, live.clone(), int(w as i64)), false)
        } else {
            match self.range(0, 4)? {
                0 => (cmp(CmpOp::Gt, live.clone(), int(w as i64 - 1)), false),
                1 => (cmp(CmpOp::Ge, live.clone(), int(w as i64 + 1)), false),
                2 => (cmp(CmpOp::Le, int(w as i64), live.clone()), false),
                3 => (cmp(CmpOp::Eq, live.clone(), int(w as i64)), false),
                _ => (cmp(CmpOp::Lt, live.clone(), int(w as i64)), true),
            }
        };
        let tail_sc = Scope {
            inner: sc.inner.clone(),
            tail: Some(w),
            depth_left: sc.depth_left,
        };
        let mut pre = Vec::new();
        let base = self.pick_base()?;
        let rows_ax = base.val.rows_axis().unwrap_or(0);
        let arange_ok = self.cfg.arange_index;
        let sel = match self.weighted(&[
            TAIL_SLICE,
            when(arange_ok, TAIL_ARANGE),
            when(arange_ok && self.cfg.named_index, TAIL_NAMED_ARANGE),
            when(arange_ok, TAIL_STRIDED_ARANGE),
        ])? {
            0 => Index::Slice {
                start: Some(sub(live.clone(), int(w as i64))),
                stop: Some(live.clone()),
                step: None,
            },
            1 => ix(arange(
                Some(sub(live.clone(), int(w as i64))),
                live.clone(),
                None,
            )),
            2 => {
                let picked = self.fresh("picked");
                pre.push(assign(
                    &picked,
                    arange(Some(sub(live.clone(), int(w as i64))), live.clone(), None),
                ));
                ix(name(&picked))
            }
            _ => {
                // Strided: values below w, which the branch guarantees.
                let s = self.range(2, 3)?;
                let a = self.range(0, w.saturating_sub(1))?;
                ix(arange(
                    Some(int(a as i64)),
                    int(w as i64),
                    Some(int(s as i64)),
                ))
            }
        };
        let read = self.read_with(&tail_sc, &base, rows_ax, sel)?;
        let read = self.acc_update(read)?;
        let other = if self.u.ratio(1, 3)? || in_else {
            let o = self.tile_attr_item(sc)?;
            vec![o]
        } else {
            self.arm_beside_update()?
        };
        let stmt = if in_else {
            if_(cond, other, vec![read])
        } else {
            if_(cond, vec![read], other)
        };
        pre.push(stmt);
        Ok(pre)
    }

    /// `rows = local.index` then `if <cond>: acc = acc + x_block[rows, ...]` (spec D6).
    pub(super) fn named_branch(&mut self, sc: &Scope) -> Result<Vec<Stmt>> {
        let o = self.outer().clone();
        let inner = sc
            .inner
            .clone()
            .expect("named branches are inside inner loops");
        let (sel, scalar) = self.inner_selector(&inner)?;
        let Index::Expr(sel) = sel else {
            unreachable!("inner selectors are expressions")
        };
        let rows = self.fresh("rows");
        if scalar {
            self.scalar_names.push(rows.clone());
        }
        let c = self.range(1, o.block.max(2))? as i64;
        let live = name(&o.live);
        let cond = match self.weighted(&[
            NAMED_BRANCH_LIVE_GE,
            NAMED_BRANCH_COUNT_GE_1,
            NAMED_BRANCH_LIVE_NE,
            NAMED_BRANCH_LIVE_GT_SWAPPED,
            NAMED_BRANCH_LIVE_GT,
            NAMED_BRANCH_LIVE_EQ,
        ])? {
            0 => cmp(CmpOp::Ge, live, int(c)),
            1 => cmp(CmpOp::Ge, attr(&inner.var, TileAttr::Count), int(1)),
            2 => cmp(CmpOp::Ne, live, int(c)),
            3 => cmp(CmpOp::Lt, int(c), live),
            4 => cmp(CmpOp::Gt, live, int(c)),
            _ => cmp(CmpOp::Eq, live, int(c)),
        };
        let base = self.pick_base()?;
        let ax = base.val.rows_axis().unwrap_or(0);
        let read = self.read_with(sc, &base, ax, ix(name(&rows)))?;
        let upd = self.acc_update(read)?;
        let other = self.arm_beside_update()?;
        Ok(vec![assign(&rows, sel), if_(cond, vec![upd], other)])
    }

    /// The arm of a branch beside the one that updates the accumulator: empty (a one-armed
    /// branch) at [`GenConfig::one_armed_branch_percent`](super::GenConfig::one_armed_branch_percent),
    /// otherwise `acc = acc`, which keeps the accumulator assigned on both paths (Helion 1.5.1
    /// runs such a kernel, and reads the accumulator before assignment when only one arm
    /// assigns it: the known issue `helion-branch-carried-unbound-local`).
    fn arm_beside_update(&mut self) -> Result<Vec<Stmt>> {
        Ok(if self.pct(self.cfg.one_armed_branch_percent)? {
            vec![]
        } else {
            vec![assign("acc", name("acc"))]
        })
    }
}
