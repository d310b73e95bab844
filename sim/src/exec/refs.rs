//! Refs: views by `.at[...]`, indexing and reshape; the bounds check (TPU interpreter) or
//! clamp (generic interpreter) of a composed window; reads, `ref[...] = v` stores and writes
//! of buffer elements.

use super::{Machine, describe, into_arr, te};
use crate::error::{ErrorKind, SimError, SimResult, SimStage};
use crate::ops::{self, contiguous, for_each_strided, strided_copy};
use crate::resolve::{RExpr, RIndex};
use crate::value::{self, Arr, Base, Cat, IntVal, MAX_RANK, Shape, Value, View};
use std::rc::Rc;

/// How a view's elements lie in its buffer.
pub(super) enum Access {
    /// `offset + Σ idx[k] * strides[k]` over `shape`.
    Strided {
        buf: usize,
        offset: usize,
        shape: Shape,
        strides: [usize; MAX_RANK],
    },
    /// Explicit offsets, row-major over the view.
    Gather { buf: usize, offsets: Vec<usize> },
}

impl<'p> Machine<'p> {
    /// A Ref transform by index parts (one level of transforms). No bounds check with the TPU
    /// interpreter's semantics (it checks the composed range on access); a static
    /// out-of-range `pl.ds` is a trace-time ValueError, as JAX's `NDIndexer` raises it (a
    /// start of 0 is never checked, as in JAX). With the generic interpreter's semantics each
    /// level is applied on its own, as its state discharge does: a level of static slices is a
    /// `lax.slice` (out of range: a trace-time TypeError, recorded while tracing), any other
    /// level a `lax.dynamic_slice` whose starts clamp into that level's input.
    pub(super) fn ref_index(&mut self, view: &View, index: &'p [RIndex]) -> SimResult<View> {
        let r = view.rank as usize;
        if index.iter().any(|p| matches!(p, RIndex::NewAxis)) {
            return Err(SimError::unsupported("`None` in a Ref index"));
        }
        let consumed = index
            .iter()
            .filter(|p| !matches!(p, RIndex::Ellipsis))
            .count();
        if consumed > r {
            return Err(te(
                ErrorKind::ValueError,
                format!(
                    "`indices` must not be longer than `shape`: {consumed} indices for shape {:?}",
                    view.shape()
                ),
            ));
        }
        // Per visible dim of `view`: (start, Some(size)) keeps the dim, (index, None) drops it.
        let mut level: [(IntVal, Option<usize>); MAX_RANK] = [(IntVal::Static(0), None); MAX_RANK];
        let mut vd = 0usize;
        for p in index {
            match p {
                RIndex::Full => {
                    level[vd] = (IntVal::Static(0), Some(view.dims[vd].1));
                    vd += 1;
                }
                RIndex::NewAxis => {}
                RIndex::Ellipsis => {
                    for _ in 0..(r - consumed) {
                        level[vd] = (IntVal::Static(0), Some(view.dims[vd].1));
                        vd += 1;
                    }
                }
                RIndex::Int(i) => {
                    level[vd] = (IntVal::Traced(Some(*i)), None);
                    vd += 1;
                }
                RIndex::Slice(s, e) => {
                    let (a, len) = ops::slice_range(*s, *e, view.dims[vd].1);
                    level[vd] = (IntVal::Static(a as i64), Some(len));
                    vd += 1;
                }
                RIndex::Expr(e) => {
                    let v = self.eval(e)?;
                    let dim = view.dims[vd].1 as i64;
                    match v {
                        Value::Ds { start, size } => {
                            if let IntVal::Static(s) = start
                                && s != 0
                                && (s >= dim || (size != 0 && s + size > dim))
                            {
                                return Err(te(
                                    ErrorKind::ValueError,
                                    if s >= dim {
                                        format!("Out of bound slice: start={s}, dim={dim}.")
                                    } else {
                                        format!(
                                            "Out of bound slice: start={s}, size={size}, stride=1, dim={dim}."
                                        )
                                    },
                                ));
                            }
                            if size < 0 {
                                return Err(te(
                                    ErrorKind::ValueError,
                                    format!("pl.ds with a negative size {size}"),
                                ));
                            }
                            level[vd] = (start, Some(size as usize));
                        }
                        other => match self.int_of(&other, "a Ref index") {
                            // A Python int index is converted to an array: traced.
                            Ok(i) => level[vd] = (IntVal::Traced(i.value()), None),
                            Err(_) => {
                                return Err(SimError::unsupported(format!(
                                    "a Ref index that is a {} (gathers are not modelled)",
                                    describe(&other)
                                )));
                            }
                        },
                    }
                    vd += 1;
                }
            }
        }
        while vd < r {
            level[vd] = (IntVal::Static(0), Some(view.dims[vd].1));
            vd += 1;
        }
        let level = &mut level[..r];
        let static_slices = level
            .iter()
            .all(|(s, size)| matches!(s, IntVal::Static(_)) && size.is_some());
        if self.tracing && self.generic_error.is_none() {
            for (k, (s, size)) in level.iter().enumerate() {
                let dim = view.dims[k].1 as i64;
                let size = size.map_or(1, |z| z as i64);
                let msg = if size > dim {
                    Some(format!(
                        "slice sizes must be less than or equal to operand shape, got size {size} for dim {dim}"
                    ))
                } else if let (true, IntVal::Static(s)) = (static_slices, s) {
                    (*s < 0 || s + size > dim).then(|| {
                        format!(
                            "slice start_indices must be nonnegative and limit_indices at most the operand shape, got start {s} size {size} for dim {dim}"
                        )
                    })
                } else {
                    None
                };
                if let Some(m) = msg {
                    self.generic_error = Some(te(ErrorKind::TypeError, m));
                    break;
                }
            }
        }
        let mut out = view.clone();
        out.rank = 0;
        for (k, &(s, size)) in level.iter().enumerate() {
            let dim = view.dims[k].1 as i64;
            let mut start = s.value().unwrap_or(0);
            if self.generic && !self.tracing && !static_slices {
                let w = size.map_or(1, |z| z as i64);
                start = start.clamp(0, (dim - w).max(0));
            }
            let bd = view.dims[k].0;
            out.start[bd as usize] += start;
            if let Some(size) = size {
                out.dims[out.rank as usize] = (bd, size);
                out.rank += 1;
            }
        }
        Ok(out)
    }

    /// A Ref reshape: a new view whose base is the old view.
    pub(super) fn ref_reshape(&self, view: &Rc<View>, dims: &[i64]) -> SimResult<View> {
        let shape = Shape::from_i64(dims)?;
        if shape.numel() != view.shape().numel() {
            return Err(te(
                ErrorKind::ValueError,
                format!(
                    "cannot reshape a Ref of shape {:?} into shape {dims:?}",
                    view.shape()
                ),
            ));
        }
        let mut v = View::whole(0, view.cat, shape);
        v.base = Base::Reshape(view.clone());
        Ok(v)
    }

    /// Checks (TPU interpreter) or clamps (generic interpreter) the window of `v` on its base.
    fn window(&self, v: &View, write: bool) -> SimResult<[i64; MAX_RANK]> {
        let base = v.base_shape;
        let mut size = [1i64; MAX_RANK];
        for k in 0..v.rank as usize {
            size[v.dims[k].0 as usize] = v.dims[k].1 as i64;
        }
        let mut start = v.start;
        // The TPU interpreter first clips the range to the buffer: a start at or past the end
        // of a dim makes the access "entirely out of bounds"; otherwise a clipped range that
        // no longer has the access's shape is "partially out of bounds".
        let mut entirely = false;
        let mut partially = false;
        for d in 0..base.rank() {
            let n = base.dims()[d] as i64;
            if start[d] >= 0 && start[d] < n.max(1) && start[d] + size[d] <= n {
                continue;
            }
            if self.generic && size[d] <= n {
                start[d] = start[d].clamp(0, n - size[d]);
                continue;
            }
            if start[d] >= n {
                entirely = true;
            } else {
                partially = true;
            }
        }
        if !(entirely || partially) {
            return Ok(start);
        }
        let range: Vec<String> = (0..base.rank())
            .map(|k| {
                if v.dims[..v.rank as usize].iter().any(|x| x.0 as usize == k) {
                    format!("{}:{}", start[k], start[k] + size[k])
                } else {
                    start[k].to_string()
                }
            })
            .collect();
        let what = match &v.base {
            Base::Buffer(b) => format!("buffer {b}"),
            Base::Reshape(_) => "a reshaped Ref".to_string(),
        };
        // A read raises IndexError either way; a write (a `swap`) raises ValueError when
        // entirely out of bounds and trips the interpreter's `assert in_bounds_shape ==
        // value.shape` when partially out of bounds.
        let (kind, verb) = match (write, entirely) {
            (false, _) => (ErrorKind::IndexError, "Out-of-bounds read of"),
            (true, true) => (ErrorKind::ValueError, "Out-of-bounds swap of"),
            (true, false) => (
                ErrorKind::AssertionError,
                "Partially out-of-bounds swap (the TPU interpreter's `assert in_bounds_shape == value.shape`) of",
            ),
        };
        Err(SimError::new(
            SimStage::Run,
            kind,
            format!(
                "{verb} {what}: [{}] but it has shape {:?}",
                range.join(", "),
                base
            ),
        ))
    }

    /// Where the elements of `v` are.
    pub(super) fn access(&self, v: &View, write: bool) -> SimResult<Access> {
        let start = self.window(v, write)?;
        let shape = v.shape();
        match &v.base {
            Base::Buffer(b) => {
                let bst = v.base_shape.strides();
                let offset: usize = (0..v.base_shape.rank())
                    .map(|d| start[d] as usize * bst[d])
                    .sum();
                let mut strides = [0usize; MAX_RANK];
                for k in 0..v.rank as usize {
                    strides[k] = bst[v.dims[k].0 as usize];
                }
                Ok(Access::Strided {
                    buf: *b,
                    offset,
                    shape,
                    strides,
                })
            }
            Base::Reshape(inner) => {
                let inner = self.access(inner, write)?;
                let bst = v.base_shape.strides();
                let offset: usize = (0..v.base_shape.rank())
                    .map(|d| start[d] as usize * bst[d])
                    .sum();
                let mut strides = [0usize; MAX_RANK];
                for k in 0..v.rank as usize {
                    strides[k] = bst[v.dims[k].0 as usize];
                }
                let (buf, inner_offsets) = match inner {
                    // A reshape of one contiguous run (the usual whole block): element `f`
                    // of the inner view is at `offset + f`, so the window stays strided.
                    // (Not when empty: an empty window's offset may lie past its buffer.)
                    Access::Strided {
                        buf,
                        offset: inner_offset,
                        shape: inner_shape,
                        strides: inner_strides,
                    } if inner_shape.numel() > 0 && contiguous(inner_shape, &inner_strides) => {
                        return Ok(Access::Strided {
                            buf,
                            offset: inner_offset + offset,
                            shape,
                            strides,
                        });
                    }
                    Access::Strided {
                        buf,
                        offset,
                        shape,
                        strides,
                    } => {
                        let mut o = Vec::with_capacity(shape.numel());
                        strided_offsets(offset, shape, strides, &mut o);
                        (buf, o)
                    }
                    Access::Gather { buf, offsets } => (buf, offsets),
                };
                let mut offsets = Vec::with_capacity(shape.numel());
                for_each_strided(offset, shape, strides, |f| offsets.push(inner_offsets[f]));
                Ok(Access::Gather { buf, offsets })
            }
        }
    }

    /// Reads a view.
    pub(super) fn read(&self, v: &View) -> SimResult<Arr> {
        if self.bufs.get(root_buffer(v)).is_some_and(|b| b.sem) {
            return Err(te(ErrorKind::TypeError, "a DMA semaphore read as data"));
        }
        if self.tracing {
            return Ok(Arr::traced(v.cat, v.shape()));
        }
        let shape = v.shape();
        match self.access(v, false)? {
            Access::Strided {
                buf,
                offset,
                shape,
                strides,
            } => {
                let data = &self.bufs[buf].data;
                if contiguous(shape, &strides) {
                    let n = shape.numel();
                    return Ok(Arr::copied(v.cat, shape, &data[offset..offset + n]));
                }
                let mut out = value::pool_vec(shape.numel());
                strided_copy(data, offset, shape, strides, &mut out);
                Ok(Arr::new(v.cat, shape, out))
            }
            Access::Gather { buf, offsets } => {
                let data = &self.bufs[buf].data;
                Ok(Arr::collect(v.cat, shape, offsets.iter().map(|&o| data[o])))
            }
        }
    }

    pub(super) fn store(
        &mut self,
        target: &'p RExpr,
        index: &'p [RIndex],
        value: &'p RExpr,
    ) -> SimResult<()> {
        let t = self.eval(target)?;
        let Value::Ref(r) = t else {
            return Err(te(
                ErrorKind::TypeError,
                format!(
                    "'{}' object does not support item assignment",
                    t.type_name()
                ),
            ));
        };
        let view = self.ref_index(&r, index)?;
        let v = self.eval(value)?;
        let a = into_arr(v)?;
        let shape = view.shape();
        if a.shape != shape {
            return Err(te(
                ErrorKind::ValueError,
                format!(
                    "Invalid shape for `swap`. Ref shape: {shape:?}. Value shape: {:?}.",
                    a.shape
                ),
            ));
        }
        let weak = matches!(a.cat, Cat::WeakInt | Cat::WeakFloat);
        if a.cat.dtype() != view.cat.dtype() && !weak {
            return Err(te(
                ErrorKind::ValueError,
                format!(
                    "Invalid dtype for `swap`. Ref dtype: {}. Value dtype: {}.",
                    view.cat.name(),
                    a.cat.name()
                ),
            ));
        }
        if self.tracing {
            return Ok(());
        }
        self.write(&view, &a)
    }

    /// Writes `a` (of `view`'s shape) into `view`, converted to its dtype.
    pub(super) fn write(&mut self, view: &View, a: &Arr) -> SimResult<()> {
        if self.bufs.get(root_buffer(view)).is_some_and(|b| b.sem) {
            return Err(te(ErrorKind::TypeError, "a DMA semaphore written as data"));
        }
        let a = ops::cast(a, view.cat);
        let Some(vals) = a.vals() else {
            return Ok(());
        };
        match self.access(view, true)? {
            Access::Strided {
                buf,
                offset,
                shape,
                strides,
            } => {
                let data = self.bufs[buf].data.to_mut();
                strided_store(data, offset, shape, strides, vals);
            }
            Access::Gather { buf, offsets } => {
                let data = self.bufs[buf].data.to_mut();
                for (&o, &x) in offsets.iter().zip(vals) {
                    data[o] = x;
                }
            }
        }
        Ok(())
    }
}

/// The buffer under a view (through Ref reshapes).
pub(super) fn root_buffer(v: &View) -> usize {
    match &v.base {
        Base::Buffer(b) => *b,
        Base::Reshape(inner) => root_buffer(inner),
    }
}

fn strided_offsets(offset: usize, shape: Shape, strides: [usize; MAX_RANK], out: &mut Vec<usize>) {
    for_each_strided(offset, shape, strides, |p| out.push(p));
}

fn strided_store(
    data: &mut [f64],
    offset: usize,
    shape: Shape,
    strides: [usize; MAX_RANK],
    vals: &[f64],
) {
    if contiguous(shape, &strides) {
        data[offset..offset + vals.len()].copy_from_slice(vals);
        return;
    }
    let mut k = 0;
    for_each_strided(offset, shape, strides, |p| {
        data[p] = vals[k];
        k += 1;
    });
}
