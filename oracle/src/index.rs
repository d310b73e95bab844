//! PyTorch indexing: which elements of a tensor an index list selects, in which order.
//!
//! An index list is resolved against a row-major shape into a [`Selection`]: the result shape
//! and the flat source offset of every result element, in row-major result order. The same
//! selection serves reads (loads and subscripts), writes (stores), and read-modify-writes
//! (atomics), so all three agree on the elements.
//!
//! Semantics follow torch's `Tensor.__getitem__`: ints select (negative ints wrap; out of
//! range is an `IndexError`) and drop the dim; slices clip at the extent like Python's
//! (`blk[1:10]` on 4 rows has 3 rows, `blk[-3:2]` has 1), with a positive step; `None` inserts a
//! size-1 axis; integer tensors are advanced indices (negative entries wrap, out-of-range
//! entries are an `IndexError`), broadcast together; when the advanced indices are adjacent
//! (after ints have been applied as selects, torch's order) their broadcast dims replace them
//! in place, otherwise they go first.

use crate::dense::{DTensor, MAX_NUMEL, expand, strides};
use crate::error::{EvalErrorKind as K, Res, err};
use lang::ir::Span;
use std::rc::Rc;

/// One evaluated index entry.
#[derive(Clone, Debug)]
pub(crate) enum Ix {
    /// `:`.
    Full,
    /// `None`.
    NewAxis,
    /// An int (select).
    Int(i64),
    /// A slice with optional bounds and a positive step.
    Slice {
        /// Start bound.
        start: Option<i64>,
        /// Stop bound.
        stop: Option<i64>,
        /// Step (> 0).
        step: i64,
    },
    /// An integer tensor of rank ≥ 1.
    Tensor(Rc<DTensor>),
}

/// Helion's ref eager mode reads through integer-tensor indices clamped into their dim
/// (`RefModeTorchFunctionMode._handle_getitem`, helion/runtime/ref_mode.py, 1.5.1): `-1` reads
/// row 0 where torch would wrap to the last row. The reference of `helion-eager` indexes this
/// way ([`crate::Tiling::HelionEager`]); ints, slices and writes are unchanged.
pub(crate) fn clamp_tensor_indices(shape: &[usize], ixs: &[Ix]) -> Vec<Ix> {
    let mut dim = 0;
    ixs.iter()
        .map(|ix| match ix {
            Ix::NewAxis => Ix::NewAxis,
            Ix::Full | Ix::Int(_) | Ix::Slice { .. } => {
                dim += 1;
                ix.clone()
            }
            Ix::Tensor(t) => {
                let n = shape.get(dim).copied().unwrap_or(1).max(1) as f64;
                dim += 1;
                let data = t.data.iter().map(|&v| v.clamp(0.0, n - 1.0)).collect();
                Ix::Tensor(Rc::new(DTensor {
                    ty: t.ty,
                    shape: t.shape.clone(),
                    data,
                    alias: t.alias,
                }))
            }
        })
        .collect()
}

/// One dimension of the iteration over a selection.
#[derive(Clone, Debug)]
enum Pd {
    /// Offsets `start + k * step` for `k < len`.
    Ap {
        start: usize,
        step: usize,
        len: usize,
    },
    /// Explicit offsets (the broadcast block of advanced indices).
    List(Vec<usize>),
}

impl Pd {
    fn len(&self) -> usize {
        match self {
            Pd::Ap { len, .. } => *len,
            Pd::List(v) => v.len(),
        }
    }

    #[inline]
    fn at(&self, k: usize) -> usize {
        match self {
            Pd::Ap { start, step, .. } => start + k * step,
            Pd::List(v) => v[k],
        }
    }
}

/// The elements an index list selects.
#[derive(Clone, Debug)]
pub(crate) struct Selection {
    /// Result shape.
    pub shape: Vec<usize>,
    /// Whether only basic indexing was used (torch returns a view).
    pub basic: bool,
    base: usize,
    dims: Vec<Pd>,
    numel: usize,
}

/// Python's slice adjustment for a positive step: `(first, len)`.
fn slice_range(start: Option<i64>, stop: Option<i64>, step: i64, n: usize) -> (usize, usize) {
    let n = n as i64;
    let clip = |v: i64| {
        if v < 0 { (v + n).max(0) } else { v.min(n) }
    };
    let s = start.map_or(0, clip);
    let e = stop.map_or(n, clip);
    let len = if e > s { (e - s - 1) / step + 1 } else { 0 };
    (s as usize, len as usize)
}

/// Resolves `ixs` against a tensor of `shape`.
pub(crate) fn select(shape: &[usize], ixs: &[Ix], span: Span) -> Res<Selection> {
    let rank = shape.len();
    let consumed = ixs.iter().filter(|i| !matches!(i, Ix::NewAxis)).count();
    if consumed > rank {
        return err(
            K::IndexOutOfRange,
            span,
            format!("too many indices for tensor of dimension {rank} ({consumed} given)"),
        );
    }
    let st = strides(shape);
    let mut base = 0usize;
    // Intermediate dims after basic indexing: Ok(pd) or Err((source dim, index tensor)).
    let mut inter: Vec<Result<Pd, (usize, &Rc<DTensor>)>> = Vec::with_capacity(rank + 2);
    let mut sd = 0usize;
    for ix in ixs {
        match ix {
            Ix::NewAxis => inter.push(Ok(Pd::Ap {
                start: 0,
                step: 0,
                len: 1,
            })),
            Ix::Full => {
                inter.push(Ok(Pd::Ap {
                    start: 0,
                    step: st[sd],
                    len: shape[sd],
                }));
                sd += 1;
            }
            Ix::Int(i) => {
                let n = shape[sd] as i64;
                let j = if *i < 0 { i + n } else { *i };
                if j < 0 || j >= n {
                    return err(
                        K::IndexOutOfRange,
                        span,
                        format!("index {i} is out of bounds for dimension {sd} with size {n}"),
                    );
                }
                base += j as usize * st[sd];
                sd += 1;
            }
            Ix::Slice { start, stop, step } => {
                let (first, len) = slice_range(*start, *stop, *step, shape[sd]);
                inter.push(Ok(Pd::Ap {
                    start: first * st[sd],
                    step: (*step as usize).saturating_mul(st[sd]),
                    len,
                }));
                sd += 1;
            }
            Ix::Tensor(t) => {
                inter.push(Err((sd, t)));
                sd += 1;
            }
        }
    }
    for d in sd..rank {
        inter.push(Ok(Pd::Ap {
            start: 0,
            step: st[d],
            len: shape[d],
        }));
    }
    let adv: Vec<usize> = (0..inter.len()).filter(|&k| inter[k].is_err()).collect();
    let mut out_shape = Vec::new();
    let mut dims = Vec::new();
    if adv.is_empty() {
        for pd in inter.into_iter().flatten() {
            out_shape.push(pd.len());
            dims.push(pd);
        }
        return Selection::finish(out_shape, true, base, dims, span);
    }
    let mut bshape: Vec<usize> = Vec::new();
    for &k in &adv {
        if let Err((_, t)) = &inter[k] {
            bshape = crate::dense::broadcast_shapes(&bshape, &t.shape, span).map_err(|mut e| {
                e.kind = K::IndexOutOfRange;
                e.message = format!(
                    "shape mismatch: indexing tensors could not be broadcast: {}",
                    e.message
                );
                e
            })?;
        }
    }
    let nb: usize = bshape.iter().product();
    if nb > MAX_NUMEL {
        return err(
            K::Budget,
            span,
            format!("an index of {nb} elements exceeds the budget"),
        );
    }
    let mut block = vec![0usize; nb];
    for &k in &adv {
        if let Err((d, t)) = &inter[k] {
            let n = shape[*d] as i64;
            let vals = expand(&t.data, &t.shape, &bshape);
            for (c, &v) in block.iter_mut().zip(&vals) {
                let i = v as i64;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return err(
                        K::IndexOutOfRange,
                        span,
                        format!("index {i} is out of bounds for dimension {d} with size {n}"),
                    );
                }
                *c += j as usize * st[*d];
            }
            crate::dense::recycle(vals);
        }
    }
    let adjacent = adv.last().copied().unwrap_or(0) + 1 - adv[0] == adv.len();
    let block_pd = Pd::List(block);
    if adjacent {
        let first = adv[0];
        let mut block_pd = Some(block_pd);
        for (k, item) in inter.into_iter().enumerate() {
            match item {
                Ok(pd) => {
                    out_shape.push(pd.len());
                    dims.push(pd);
                }
                Err(_) if k == first => {
                    out_shape.extend(&bshape);
                    dims.extend(block_pd.take());
                }
                Err(_) => {}
            }
        }
    } else {
        out_shape.extend(&bshape);
        dims.push(block_pd);
        for pd in inter.into_iter().flatten() {
            out_shape.push(pd.len());
            dims.push(pd);
        }
    }
    Selection::finish(out_shape, false, base, dims, span)
}

impl Selection {
    fn finish(
        shape: Vec<usize>,
        basic: bool,
        mut base: usize,
        dims: Vec<Pd>,
        span: Span,
    ) -> Res<Selection> {
        let numel: usize = dims.iter().map(Pd::len).product();
        if numel > MAX_NUMEL {
            return err(
                K::Budget,
                span,
                format!("a selection of {numel} elements exceeds the budget"),
            );
        }
        // Drop size-1 dims (fold their offset into the base) and merge contiguous runs.
        let mut merged: Vec<Pd> = Vec::with_capacity(dims.len());
        if numel > 0 {
            for pd in dims {
                if pd.len() == 1 {
                    base += pd.at(0);
                    continue;
                }
                if let (
                    Some(Pd::Ap {
                        start: sa,
                        step: ta,
                        len: na,
                    }),
                    Pd::Ap {
                        start: sb,
                        step: 1,
                        len: nb,
                    },
                ) = (merged.last(), &pd)
                    && *ta == *nb
                {
                    let m = Pd::Ap {
                        start: sa + sb,
                        step: 1,
                        len: na * nb,
                    };
                    *merged.last_mut().expect("non-empty") = m;
                    continue;
                }
                merged.push(pd);
            }
        } else {
            merged.push(Pd::Ap {
                start: 0,
                step: 0,
                len: 0,
            });
        }
        Ok(Selection {
            shape,
            basic,
            base,
            dims: merged,
            numel,
        })
    }

    /// Number of selected elements.
    pub fn numel(&self) -> usize {
        self.numel
    }

    /// Calls `f(offset)` for every selected element, in row-major result order.
    pub fn for_each(&self, mut f: impl FnMut(usize)) {
        self.for_each_run(|o, n| (o..o + n).for_each(&mut f));
    }

    /// Calls `f(offset, len)` for every run of consecutive selected offsets, in row-major
    /// result order (a contiguous innermost dimension is one run per outer index).
    pub fn for_each_run(&self, mut f: impl FnMut(usize, usize)) {
        if self.numel == 0 {
            return;
        }
        let k = self.dims.len();
        if k == 0 {
            f(self.base, 1);
            return;
        }
        let last = &self.dims[k - 1];
        let mut small = [0usize; 8];
        let mut large = Vec::new();
        let idx: &mut [usize] = if k <= 8 {
            &mut small[..k]
        } else {
            large.resize(k, 0);
            &mut large
        };
        let mut outer = self.base + self.dims[..k - 1].iter().map(|pd| pd.at(0)).sum::<usize>();
        loop {
            match last {
                Pd::Ap {
                    start,
                    step: 1,
                    len,
                } => f(outer + start, *len),
                _ => (0..last.len()).for_each(|j| f(outer + last.at(j), 1)),
            }
            let mut d = k - 1;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                let pd = &self.dims[d];
                outer -= pd.at(idx[d]);
                idx[d] += 1;
                if idx[d] < pd.len() {
                    outer += pd.at(idx[d]);
                    break;
                }
                idx[d] = 0;
                outer += pd.at(0);
            }
        }
    }

    /// The selected values of `src`, in row-major result order.
    pub fn gather(&self, src: &[f64]) -> Vec<f64> {
        let mut out = crate::dense::buffer(self.numel);
        self.for_each_run(|o, n| out.extend_from_slice(&src[o..o + n]));
        out
    }

    /// How many selected elements are not marked in `written`.
    pub fn count_unwritten(&self, written: &[bool]) -> usize {
        let mut count = 0usize;
        self.for_each_run(|o, n| count += written[o..o + n].iter().filter(|&&w| !w).count());
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(v: &[i64]) -> Ix {
        Ix::Tensor(Rc::new(DTensor::new(
            crate::ty::Ty::I32,
            vec![v.len()],
            v.iter().map(|&x| x as f64).collect(),
        )))
    }

    fn sel(shape: &[usize], ixs: &[Ix]) -> Res<(Vec<usize>, Vec<usize>)> {
        let s = select(shape, ixs, Span::default())?;
        let mut offs = Vec::new();
        s.for_each(|o| offs.push(o));
        Ok((s.shape.clone(), offs))
    }

    #[test]
    fn slices_clip_and_wrap_like_python() {
        let s = |a, b| Ix::Slice {
            start: a,
            stop: b,
            step: 1,
        };
        assert_eq!(
            sel(&[4], &[s(Some(1), Some(10))]).unwrap(),
            (vec![3], vec![1, 2, 3])
        );
        assert_eq!(
            sel(&[4], &[s(Some(-3), Some(2))]).unwrap(),
            (vec![1], vec![1])
        );
        assert_eq!(
            sel(&[4], &[s(Some(3), Some(1))]).unwrap(),
            (vec![0], vec![])
        );
        let step = Ix::Slice {
            start: None,
            stop: None,
            step: 3,
        };
        assert_eq!(sel(&[7], &[step]).unwrap(), (vec![3], vec![0, 3, 6]));
    }

    #[test]
    fn ints_select_and_wrap() {
        assert_eq!(sel(&[4, 2], &[Ix::Int(-1)]).unwrap(), (vec![2], vec![6, 7]));
        let e = sel(&[4, 2], &[Ix::Int(4)]).unwrap_err();
        assert_eq!(e.kind, K::IndexOutOfRange);
        let e = sel(&[4], &[Ix::Int(0), Ix::Int(0)]).unwrap_err();
        assert_eq!(e.kind, K::IndexOutOfRange);
    }

    #[test]
    fn none_and_advanced_indices_place_dims_like_torch() {
        // x[None, idx, :] on (4, 2): (1, 2, 2)
        let (shape, offs) = sel(&[4, 2], &[Ix::NewAxis, idx(&[3, 0]), Ix::Full]).unwrap();
        assert_eq!(shape, vec![1, 2, 2]);
        assert_eq!(offs, vec![6, 7, 0, 1]);
        // x[idx, :, idx] on (3, 2, 3): non-adjacent -> block first: (2, 2)
        let (shape, offs) = sel(&[3, 2, 3], &[idx(&[0, 2]), Ix::Full, idx(&[1, -1])]).unwrap();
        assert_eq!(shape, vec![2, 2]);
        assert_eq!(offs, vec![1, 4, 14, 17]);
        // x[idx, 0, idx]: the int is a select first, so the tensors are adjacent (torch).
        let (shape, _) = sel(&[3, 2, 3], &[idx(&[0, 2]), Ix::Int(0), idx(&[1, 1])]).unwrap();
        assert_eq!(shape, vec![2]);
        let e = sel(&[4], &[idx(&[4])]).unwrap_err();
        assert_eq!(e.kind, K::IndexOutOfRange);
    }

    #[test]
    fn gather_uses_contiguous_runs() {
        let src: Vec<f64> = (0..24).map(f64::from).collect();
        let s = select(
            &[4, 2, 3],
            &[Ix::Slice {
                start: Some(1),
                stop: Some(3),
                step: 1,
            }],
            Span::default(),
        )
        .unwrap();
        assert_eq!(s.gather(&src), (6..18).map(f64::from).collect::<Vec<_>>());
        let s = select(
            &[4, 2, 3],
            &[Ix::Full, Ix::Int(1), Ix::Full],
            Span::default(),
        )
        .unwrap();
        assert_eq!(
            s.gather(&src),
            vec![3., 4., 5., 9., 10., 11., 15., 16., 17., 21., 22., 23.]
        );
    }
}
