//! Views: chains of `None` subscripts, `.unsqueeze`, `.squeeze`, `.reshape`/`.view` and
//! `.permute` on the block (bound to names before the items) or on a read, with the shape and
//! contiguity of each result tracked so later subscripts and reductions line up.

use super::{Base, Gen, when};
use crate::generators::make::*;
use crate::generators::shape::{Dim, Val};
use arbitrary::Result;
use lang::ir::{Expr, Index, Stmt, ViewOp};

/// One view step ([`Gen::view_step`]): a `None` subscript, `.unsqueeze`, `.squeeze` (where a
/// dim of one may go) and `.reshape`/`.view`, which only a value with at most one run of rows
/// takes and which weighs most.
const VIEW_NONE_SUBSCRIPT: u32 = 3;
const VIEW_UNSQUEEZE: u32 = 3;
const VIEW_SQUEEZE: u32 = 2;
const VIEW_RESHAPE: u32 = 4;

impl Gen<'_, '_> {
    /// Views of the block bound to names before the items, so items can narrow them
    /// (`grouped = x_block[:, None, :, :]`, `x_block.reshape(-1, 2, 128)`, ...).
    pub(super) fn view_prelude(&mut self) -> Result<Vec<Stmt>> {
        let mut out = Vec::new();
        // Helion reshapes only a resident block with no live guard: fewer preludes otherwise.
        let p = if self.outer().unguarded {
            self.cfg.view_percent
        } else {
            self.cfg.view_percent / 3
        };
        if !(self.cfg.views || self.cfg.permute) || !self.pct(p)? {
            return Ok(out);
        }
        let base = self.outer().bases[0].clone();
        let (e, val) = self.view_chain(name(&base.name), base.val.clone(), 2)?;
        if val.rows_count() == 1 && val != base.val {
            let n = self.fresh("grouped");
            out.push(assign(&n, e));
            self.outer
                .as_mut()
                .expect("outer")
                .bases
                .push(Base { name: n, val });
        }
        Ok(out)
    }

    /// Up to `steps` view (or permute) steps on `e`.
    pub(super) fn view_chain(
        &mut self,
        mut e: Expr,
        mut val: Val,
        steps: usize,
    ) -> Result<(Expr, Val)> {
        let n = self.range(1, steps)?;
        let keep_minor = self.u.ratio(4, 5)?;
        for _ in 0..n {
            let permute_ok = self.cfg.permute
                && val.rank() >= 2
                && self.pct(self.cfg.permute_percent.saturating_mul(3))?;
            if permute_ok {
                let mut perm: Vec<usize> = (0..val.rank()).collect();
                let i = self.range(0, perm.len() - 1)?;
                let j = self.range(0, perm.len() - 1)?;
                perm.swap(i, j);
                if perm.iter().enumerate().all(|(k, &p)| k == p) {
                    let last = perm.len() - 1;
                    perm.swap(0, last);
                }
                e = permute(e, perm.iter().map(|&p| p as i64).collect());
                val = Val {
                    dims: perm.iter().map(|&p| val.dims[p]).collect(),
                    contiguous: false,
                };
                continue;
            }
            if !self.cfg.views {
                break;
            }
            let (ne, nv) = self.view_step(e, val, keep_minor)?;
            e = ne;
            val = nv;
        }
        Ok((e, val))
    }

    /// One view: a `None` subscript, `.unsqueeze`, `.squeeze`, or `.reshape`/`.view`.
    /// With `keep_minor`, the two minor dims stay as they are (Helion's resident views need
    /// that); otherwise any view of the element count.
    fn view_step(&mut self, e: Expr, val: Val, keep_minor: bool) -> Result<(Expr, Val)> {
        let rank = val.rank();
        let keep = keep_minor && rank >= 2;
        // Highest position a new axis may take.
        let lim = if keep { rank - 2 } else { rank };
        let ones: Vec<usize> = (0..rank)
            .filter(|&i| val.dims[i] == Dim::Fixed(1) && (!keep || i + 2 < rank))
            .collect();
        let choice = self.weighted(&[
            when(self.cfg.new_axis, VIEW_NONE_SUBSCRIPT),
            VIEW_UNSQUEEZE,
            when(!ones.is_empty(), VIEW_SQUEEZE),
            when(val.rows_count() <= 1, VIEW_RESHAPE),
        ])?;
        let mut dims = val.dims.clone();
        Ok(match choice {
            0 => {
                let p = self.range(0, lim)?;
                let mut idx: Vec<Index> = (0..rank).map(|_| Index::Full).collect();
                idx.insert(p, Index::NewAxis);
                dims.insert(p, Dim::Fixed(1));
                let idx = self.trim(idx);
                (
                    subscript(e, idx),
                    Val {
                        dims,
                        contiguous: val.contiguous,
                    },
                )
            }
            1 => {
                let p = self.range(0, lim)?;
                dims.insert(p, Dim::Fixed(1));
                let d = if self.u.ratio(1, 5)? {
                    p as i64 - rank as i64 - 1
                } else {
                    p as i64
                };
                (
                    view(e, ViewOp::Unsqueeze(d)),
                    Val {
                        dims,
                        contiguous: val.contiguous,
                    },
                )
            }
            2 => {
                let p = *self.u.choose(&ones)?;
                dims.remove(p);
                (
                    view(e, ViewOp::Squeeze(p as i64)),
                    Val {
                        dims,
                        contiguous: val.contiguous,
                    },
                )
            }
            _ => {
                // Reshape: keep the row dim as -1; insert a 1, merge the two minor dims, merge
                // the row dim with the next fixed dim, or keep the dims.
                let r = val.rows_axis();
                match self.range(0, 3)? {
                    0 => {
                        let p = self.range(0, lim)?;
                        dims.insert(p, Dim::Fixed(1));
                    }
                    1 if !keep && rank >= 2 && !matches!(r, Some(a) if a + 2 >= rank) => {
                        let (a, b) = (dims[rank - 2], dims[rank - 1]);
                        if let (Dim::Fixed(a), Dim::Fixed(b)) = (a, b) {
                            dims.truncate(rank - 2);
                            dims.push(Dim::Fixed(a * b));
                        }
                    }
                    2 if matches!(r, Some(a) if a + 3 + usize::from(keep) <= rank) => {
                        let a = r.unwrap_or(0);
                        dims.remove(a + 1);
                    }
                    _ => {}
                }
                let spelled: Vec<Expr> = dims
                    .iter()
                    .map(|d| match d {
                        Dim::Fixed(n) => int(*n as i64),
                        Dim::Rows => int(-1),
                    })
                    .collect();
                let use_view = val.contiguous && self.u.ratio(1, 2)?;
                let op = if use_view {
                    ViewOp::View(spelled)
                } else {
                    ViewOp::Reshape(spelled)
                };
                // A reshape may return a view of a non-contiguous value: keep the flag.
                (
                    view(e, op),
                    Val {
                        dims,
                        contiguous: val.contiguous,
                    },
                )
            }
        })
    }
}
