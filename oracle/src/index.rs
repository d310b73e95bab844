//! PyTorch indexing: which elements of a tensor an index list selects, in which order.
//!
//! An index list is resolved against a shape into a [`Selection`]: ndarray's slicing of its
//! basic entries (a [`SliceInfoElem`] per entry: ints as `Index`, slices as `Slice`, `None` as
//! `NewAxis`) and, when integer tensors take part, the broadcast block of their (range-checked)
//! indices. The same selection serves reads (loads and subscripts), writes (stores) and
//! read-modify-writes (atomics), through views of the one source array, so all three agree
//! on the elements. The views keep the source's rank, fixed (`Ix0` to `Ix4`) where the source's
//! is: the basic entries narrow an axis in place (`slice_axis_inplace`, `collapse_axis` for an
//! int) and each element of the block collapses the indexed axes, so the elements come out in
//! the result's row-major order without a dynamic-rank `slice` per evaluation (with the
//! fixed-rank stores, 5% fewer instructions for the reference on a campaign, callgrind
//! 2026-12-05).
//!
//! Semantics follow torch's `Tensor.__getitem__`: ints select (negative ints wrap; out of
//! range is an `IndexError`) and drop the dim; slices clip at the extent like Python's
//! (`blk[1:10]` on 4 rows has 3 rows, `blk[-3:2]` has 1), with a positive step; `None` inserts a
//! size-1 axis; integer tensors are advanced indices (negative entries wrap, out-of-range
//! entries are an `IndexError`), broadcast together; when the advanced indices are adjacent
//! (after ints have been applied as selects, torch's order) their broadcast dims replace them
//! in place, otherwise they go first.
//!
//! ndarray decides what a basic entry selects once it is in range; the rules it does not share
//! with torch are ours, here: Python's clipping of slice bounds (ndarray panics on a bound past
//! the extent), the range check and wrapping of ints and index-tensor entries (an invalid case,
//! not a panic), and the placement of advanced indices (ndarray's `select` takes one axis).

use crate::dense::{
    DTensor, MAX_NUMEL, at_fixed_rank, broadcast_shapes, extend_values, from_shape_vec,
};
use crate::error::{EvalErrorKind as K, Res, err};
use lang::ir::Span;
use ndarray::{
    Array3, ArrayBase, ArrayD, ArrayView, ArrayView3, ArrayViewD, ArrayViewMut, ArrayViewMutD,
    Axis, Dimension, IxDyn, RawData, Slice, SliceInfoElem, Zip,
};
use std::borrow::Cow;
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
    /// A tile: the slice `begin:end` (torch's reading of `x[tile]`), except where
    /// [`tile_broadcast`] reads it Helion's way first.
    Tile {
        /// First row.
        begin: i64,
        /// Row past the last.
        end: i64,
    },
}

/// `ixs` of a read of a host tensor of `shape` with Helion's reading of a tile into a dim of
/// size 1: row 0, kept as a dim of 1 that broadcasts (`bias[tile_m, tile_n]` of a `[1, N]`
/// bias), wherever the tile lies. Measured with Helion 1.5.1: its eager mode and its Pallas
/// backend both add `bias[0]` to rows 64..127 of `x[tile_m, tile_n] + bias[tile_m, tile_n]`
/// (blocks 64 and 128), where torch's slice `bias[64:128]` is empty and the sum raises. Every
/// other tile stays torch's slice.
pub(crate) fn tile_broadcast(shape: &[usize], ixs: &mut [Ix]) {
    let mut dim = 0;
    for ix in ixs.iter_mut() {
        match ix {
            Ix::NewAxis => continue,
            Ix::Tile { .. } if shape.get(dim) == Some(&1) => {
                *ix = Ix::Slice {
                    start: Some(0),
                    stop: Some(1),
                    step: 1,
                };
            }
            Ix::Tile { .. } | Ix::Full | Ix::Int(_) | Ix::Slice { .. } | Ix::Tensor(_) => {}
        }
        dim += 1;
    }
}

/// The integer-tensor part of a selection: the broadcast block of the advanced indices.
#[derive(Clone, Debug)]
struct Advanced {
    /// The axes of the source the index tensors index, ascending.
    axes: Vec<usize>,
    /// Per axis of `axes`: the wrapped index of every element of the block, row-major.
    rows: Vec<Vec<usize>>,
    /// How many elements the result has before the block (the product of the dims before it:
    /// 1 when the block goes first) and after it. The elements one block element selects
    /// are `before × after`, in the result's order; the result is `before × block × after`.
    before: usize,
    after: usize,
}

impl Advanced {
    /// Elements of the block.
    fn len(&self) -> usize {
        self.rows.first().map_or(0, Vec::len)
    }
}

/// The elements an index list selects.
#[derive(Clone, Debug)]
pub(crate) struct Selection {
    /// Result shape.
    pub shape: Vec<usize>,
    /// Whether only basic indexing was used (torch returns a view).
    pub basic: bool,
    /// The basic entries, one per source axis (index tensors as full slices) and per `None`.
    info: Vec<SliceInfoElem>,
    /// Whether every basic entry is a full slice or `None`: the basic view has the source's
    /// elements, and narrowing is skipped.
    whole: bool,
    advanced: Option<Advanced>,
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

/// The whole of one axis.
const FULL: SliceInfoElem = SliceInfoElem::Slice {
    start: 0,
    end: None,
    step: 1,
};

/// Resolves `ixs` against a tensor of `shape`.
/// The ndarray slice of `len` elements from `first` by `step` (Python's clipped bounds, so in
/// range by construction).
fn slice_elem(first: usize, len: usize, step: i64) -> SliceInfoElem {
    let end = if len == 0 {
        first
    } else {
        first + (len - 1) * step as usize + 1
    };
    SliceInfoElem::Slice {
        start: first as isize,
        end: Some(end as isize),
        step: if len == 0 { 1 } else { step as isize },
    }
}

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
    let mut info = Vec::with_capacity(rank + 2);
    // The basic view's shape, and the index tensors with their source dim and view axis.
    let mut view_shape = Vec::with_capacity(rank + 2);
    let mut tensors: Vec<(usize, usize, &Rc<DTensor>)> = Vec::new();
    let mut sd = 0usize;
    for ix in ixs {
        match ix {
            Ix::NewAxis => {
                info.push(SliceInfoElem::NewAxis);
                view_shape.push(1);
            }
            Ix::Full => {
                info.push(FULL);
                view_shape.push(shape[sd]);
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
                info.push(SliceInfoElem::Index(j as isize));
                sd += 1;
            }
            Ix::Slice { start, stop, step } => {
                let (first, len) = slice_range(*start, *stop, *step, shape[sd]);
                info.push(slice_elem(first, len, *step));
                view_shape.push(len);
                sd += 1;
            }
            Ix::Tile { begin, end } => {
                let (first, len) = slice_range(Some(*begin), Some(*end), 1, shape[sd]);
                info.push(slice_elem(first, len, 1));
                view_shape.push(len);
                sd += 1;
            }
            Ix::Tensor(t) => {
                tensors.push((sd, view_shape.len(), t));
                info.push(FULL);
                view_shape.push(shape[sd]);
                sd += 1;
            }
        }
    }
    for &n in &shape[sd..] {
        info.push(FULL);
        view_shape.push(n);
    }
    if tensors.is_empty() {
        return Selection::finish(view_shape, true, info, None, span);
    }
    let mut bshape: Vec<usize> = Vec::new();
    for (_, _, t) in &tensors {
        bshape = broadcast_shapes(&bshape, t.shape(), span).map_err(|mut e| {
            e.kind = K::IndexOutOfRange;
            e.message = format!(
                "shape mismatch: indexing tensors could not be broadcast: {}",
                e.message
            );
            e
        })?;
    }
    let nb: usize = bshape.iter().product();
    if nb > MAX_NUMEL {
        return err(
            K::Budget,
            span,
            format!("an index of {nb} elements exceeds the budget"),
        );
    }
    let mut rows = Vec::with_capacity(tensors.len());
    for &(d, _, t) in &tensors {
        let n = shape[d] as i64;
        let vals = t
            .data
            .broadcast(IxDyn(&bshape))
            .expect("checked by broadcast_shapes");
        let mut row = Vec::with_capacity(nb);
        // Row-major, so the first entry out of range is the one torch names.
        for &v in vals.iter() {
            let i = v as i64;
            let j = if i < 0 { i + n } else { i };
            if j < 0 || j >= n {
                return err(
                    K::IndexOutOfRange,
                    span,
                    format!("index {i} is out of bounds for dimension {d} with size {n}"),
                );
            }
            row.push(j as usize);
        }
        rows.push(row);
    }
    let axes: Vec<usize> = tensors.iter().map(|&(_, a, _)| a).collect();
    let adjacent = axes[axes.len() - 1] + 1 - axes[0] == axes.len();
    let rest = (0..view_shape.len()).filter(|a| !axes.contains(a));
    let (before, after, out_shape) = if adjacent {
        let before = &view_shape[..axes[0]];
        let after = &view_shape[axes[axes.len() - 1] + 1..];
        let out_shape = [before, &bshape, after].concat();
        (before.iter().product(), after.iter().product(), out_shape)
    } else {
        let kept: Vec<usize> = rest.map(|a| view_shape[a]).collect();
        (1, kept.iter().product(), [&bshape[..], &kept].concat())
    };
    let advanced = Advanced {
        axes: tensors.iter().map(|&(d, _, _)| d).collect(),
        rows,
        before,
        after,
    };
    Selection::finish(out_shape, false, info, Some(advanced), span)
}

impl Selection {
    fn finish(
        shape: Vec<usize>,
        basic: bool,
        info: Vec<SliceInfoElem>,
        advanced: Option<Advanced>,
        span: Span,
    ) -> Res<Selection> {
        let numel: usize = shape.iter().product();
        if numel > MAX_NUMEL {
            return err(
                K::Budget,
                span,
                format!("a selection of {numel} elements exceeds the budget"),
            );
        }
        let whole = info
            .iter()
            .all(|e| matches!(e, SliceInfoElem::NewAxis) || *e == FULL);
        Ok(Selection {
            shape,
            basic,
            info,
            whole,
            advanced,
        })
    }

    /// Number of selected elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Narrows `v`, the source at its own rank, to the basic entries: a slice narrows its
    /// axis (ndarray's `slice_axis_inplace`), an int collapses its axis to length 1
    /// (`collapse_axis`), `None` adds nothing. The rank stays the source's, so a fixed-rank
    /// view stays one; the elements in row-major order are the basic view's.
    fn narrow<S: RawData, D: Dimension>(&self, v: &mut ArrayBase<S, D>) {
        if self.whole {
            return;
        }
        let mut axis = 0;
        for e in &self.info {
            match *e {
                SliceInfoElem::NewAxis => continue,
                SliceInfoElem::Index(j) => v.collapse_axis(Axis(axis), j as usize),
                SliceInfoElem::Slice { start, end, step } => {
                    if *e != FULL {
                        v.slice_axis_inplace(Axis(axis), Slice { start, end, step });
                    }
                }
            }
            axis += 1;
        }
    }

    /// Calls `f(part)` for every element of the advanced block, in row-major order, with
    /// `part` the elements of the basic view that it selects (the indexed axes collapsed), or
    /// once with the whole basic view when there is no block; `src` and every part keep
    /// `src`'s rank.
    fn for_each_part<'a, T, D: Dimension>(
        &self,
        mut src: ArrayView<'a, T, D>,
        mut f: impl FnMut(ArrayView<'a, T, D>),
    ) {
        self.narrow(&mut src);
        let Some(adv) = &self.advanced else {
            return f(src);
        };
        for b in 0..adv.len() {
            let mut part = src.clone();
            for (&axis, row) in adv.axes.iter().zip(&adv.rows) {
                part.collapse_axis(Axis(axis), row[b]);
            }
            f(part);
        }
    }

    /// The selected values of `src`, in standard layout.
    pub fn gather(&self, src: ArrayViewD<'_, f64>) -> ArrayD<f64> {
        let mut values = Vec::with_capacity(self.numel());
        at_fixed_rank!(src, |src| self
            .for_each_part(src, |part| { extend_values(&mut values, part) }));
        if let Some(adv) = &self.advanced
            && adv.before > 1
        {
            // Appended block element by block element: `block × before × after`; the result
            // has the block after `before`.
            let block_major = Array3::from_shape_vec((adv.len(), adv.before, adv.after), values)
                .expect("the parts fill the block");
            values = Vec::with_capacity(self.numel());
            extend_values(&mut values, block_major.view().permuted_axes([1, 0, 2]));
        }
        from_shape_vec(&self.shape, values)
    }

    /// How many selected elements of `written` are false.
    pub fn count_unwritten(&self, written: ArrayViewD<'_, bool>) -> usize {
        let mut count = 0;
        at_fixed_rank!(written, |w| self.for_each_part(w, |part| {
            count += part.iter().filter(|&&w| !w).count();
        }));
        count
    }

    /// Calls `f(target, value)` for every selected element of `dst` and the value at its
    /// position in `values` (which has the selection's shape). Elements a block element
    /// selects are visited before those of the next one, so a target that several block
    /// elements select (duplicate indices) sees their values in row-major order, as torch's
    /// element-by-element loop does; within one block element the targets are distinct.
    pub fn zip_mut<T, U: Clone>(
        &self,
        dst: ArrayViewMutD<'_, T>,
        values: ArrayViewD<'_, U>,
        f: impl FnMut(&mut T, &U),
    ) {
        let values = values.as_standard_layout();
        let values = values.as_slice().expect("a standard array is a slice");
        // The values in the order the parts are visited: block-major.
        let block_major: Cow<'_, [U]> = match &self.advanced {
            Some(adv) if adv.before > 1 => {
                let v = ArrayView3::from_shape((adv.before, adv.len(), adv.after), values)
                    .expect("values have the selection's shape");
                Cow::Owned(v.permuted_axes([1, 0, 2]).iter().cloned().collect())
            }
            Some(_) | None => Cow::Borrowed(values),
        };
        at_fixed_rank!(dst, |dst| self.zip_parts(dst, &block_major, f));
    }

    /// [`Selection::zip_mut`] at `dst`'s rank, with `values` block-major.
    fn zip_parts<T, U, D: Dimension>(
        &self,
        mut dst: ArrayViewMut<'_, T, D>,
        values: &[U],
        mut f: impl FnMut(&mut T, &U),
    ) {
        self.narrow(&mut dst);
        let Some(adv) = &self.advanced else {
            let v = ArrayView::from_shape(dst.raw_dim(), values)
                .expect("values have the selection's shape");
            Zip::from(&mut dst).and(&v).for_each(f);
            return;
        };
        let per = adv.before * adv.after;
        for b in 0..adv.len() {
            let mut part = dst.view_mut();
            for (&axis, row) in adv.axes.iter().zip(&adv.rows) {
                part.collapse_axis(Axis(axis), row[b]);
            }
            let v = ArrayView::from_shape(part.raw_dim(), &values[b * per..(b + 1) * per])
                .expect("a block element selects `before × after` values");
            Zip::from(part).and(&v).for_each(&mut f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(v: &[i64]) -> Ix {
        Ix::Tensor(Rc::new(DTensor::from_vec(
            crate::ty::Ty::I32,
            &[v.len()],
            v.iter().map(|&x| x as f64).collect(),
        )))
    }

    /// The selection's shape and the row-major offsets of the elements it selects.
    fn sel(shape: &[usize], ixs: &[Ix]) -> Res<(Vec<usize>, Vec<usize>)> {
        let s = select(shape, ixs, Span::default())?;
        let n: usize = shape.iter().product();
        let offsets = ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|o| o as f64).collect())
            .expect("offsets fill the shape");
        let got = s.gather(offsets.view());
        assert_eq!(got.shape(), &s.shape[..]);
        Ok((s.shape.clone(), got.iter().map(|&o| o as usize).collect()))
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
    fn gather_reads_slices_and_selects() {
        let src = ArrayD::from_shape_vec(IxDyn(&[4, 2, 3]), (0..24).map(f64::from).collect())
            .expect("24 values");
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
        assert_eq!(
            s.gather(src.view()).iter().copied().collect::<Vec<_>>(),
            (6..18).map(f64::from).collect::<Vec<_>>()
        );
        let s = select(
            &[4, 2, 3],
            &[Ix::Full, Ix::Int(1), Ix::Full],
            Span::default(),
        )
        .unwrap();
        assert_eq!(
            s.gather(src.view()).iter().copied().collect::<Vec<_>>(),
            vec![3., 4., 5., 9., 10., 11., 15., 16., 17., 21., 22., 23.]
        );
    }
}
