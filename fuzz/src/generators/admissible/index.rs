//! Indexing in the shape run: the shape a subscript, load or store leaves, which elements it
//! selects per dim (exactly, so every index is known to be in range on this iteration), and
//! whether the result stays contiguous. Refuses what eager PyTorch refuses and the forms the
//! validator is deliberately stricter on (an int index beside a tensor index).

use super::run::ShapeRun;
use super::values::{R, V, contiguous_after};
use lang::ir::{Expr, Index};

impl ShapeRun<'_> {
    /// Shapes through indexing: the result shape, the selected indices per base dim, and whether
    /// the result is contiguous. Tiles index host tensors only (`x[tile, :]`).
    pub(super) fn index(
        &mut self,
        base: &[usize],
        entries: &[Index],
        tiles: bool,
    ) -> R<(Vec<usize>, Vec<Vec<usize>>, bool)> {
        let mut out = Vec::new();
        let mut sel: Vec<Vec<usize>> = Vec::new();
        let mut dim = 0;
        let mut advanced = 0;
        let mut ints = 0;
        let mut tensor_exprs: Vec<*const Expr> = Vec::new();
        for entry in entries {
            if !matches!(entry, Index::NewAxis) && dim >= base.len() {
                return Err(format!("too many indices for a rank-{} value", base.len()));
            }
            let d = base.get(dim).copied().unwrap_or(0);
            let in_range = |k: i64| -> R<usize> {
                if k < -(d as i64) || k >= d as i64 {
                    Err(format!("index {k} out of range for a dim of {d}"))
                } else {
                    Ok(if k < 0 {
                        (k + d as i64) as usize
                    } else {
                        k as usize
                    })
                }
            };
            match entry {
                Index::NewAxis => out.push(1),
                Index::Full => {
                    out.push(d);
                    sel.push((0..d).collect());
                    dim += 1;
                }
                Index::Int(k) => {
                    sel.push(vec![in_range(*k)?]);
                    ints += 1;
                    dim += 1;
                }
                Index::Slice { start, stop, step } => {
                    let mut bound = |x: &Option<Expr>| -> R<Option<i64>> {
                        match x {
                            None => Ok(None),
                            Some(x) => match self.eval(x)? {
                                V::Int(v) => Ok(Some(v)),
                                other => Err(format!("a slice bound is {}", other.what())),
                            },
                        }
                    };
                    let (a, b, s) = (bound(start)?, bound(stop)?, bound(step)?.unwrap_or(1));
                    if s <= 0 {
                        return Err("slice step must be positive".into());
                    }
                    let di = d as i64;
                    let norm = |v: i64| if v < 0 { (v + di).max(0) } else { v.min(di) };
                    let (lo, hi) = (a.map_or(0, norm), b.map_or(di, norm));
                    let picked: Vec<usize> = (lo..hi.max(lo))
                        .step_by(s as usize)
                        .map(|v| v as usize)
                        .collect();
                    out.push(picked.len());
                    sel.push(picked);
                    dim += 1;
                }
                Index::Expr(x) => match self.eval(x)? {
                    V::Int(k) => {
                        sel.push(vec![in_range(k)?]);
                        ints += 1;
                        dim += 1;
                    }
                    V::Tile(t) if tiles => {
                        if t.end > d as i64 {
                            return Err(format!(
                                "tile {}..{} reaches past a dim of {d}",
                                t.begin, t.end
                            ));
                        }
                        let picked: Vec<usize> = (t.begin as usize..t.end as usize).collect();
                        out.push(picked.len());
                        sel.push(picked);
                        dim += 1;
                    }
                    V::T(t) if t.shape.len() == 1 && !t.dtype.is_float() => {
                        let Some(vals) = t.ints else {
                            return Err("a tensor index whose values are not known".into());
                        };
                        let picked = vals.iter().map(|&k| in_range(k)).collect::<R<Vec<_>>>()?;
                        out.push(picked.len());
                        sel.push(picked);
                        advanced += 1;
                        tensor_exprs.push(x as *const Expr);
                        dim += 1;
                    }
                    // A scalar int tensor (`h0[idx[request], :, :]`) drops its dim as an int
                    // does; it is a tensor index all the same.
                    V::T(t) if t.shape.is_empty() && !t.dtype.is_float() => {
                        let Some([k]) = t.ints.as_deref() else {
                            return Err("a tensor index whose values are not known".into());
                        };
                        sel.push(vec![in_range(*k)?]);
                        advanced += 1;
                        tensor_exprs.push(x as *const Expr);
                        dim += 1;
                    }
                    other => return Err(format!("an index that is {}", other.what())),
                },
            }
        }
        for &d in &base[dim.min(base.len())..] {
            out.push(d);
            sel.push((0..d).collect());
        }
        if advanced > 1 {
            return Err("more than one tensor index".into());
        }
        if advanced == 1 && ints > 0 {
            return Err("an int index beside a tensor index".into());
        }
        let contiguous = contiguous_after(entries, true, &|x| {
            tensor_exprs.contains(&(x as *const Expr))
        });
        Ok((out, sel, contiguous))
    }
}
