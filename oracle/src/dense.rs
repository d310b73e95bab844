//! Device values: dense tensors on `ndarray` arrays, and the elementwise, cast and shape
//! operations on them.
//!
//! A [`DTensor`] owns an [`ArrayD`] in standard (row-major, contiguous) layout: every operation
//! makes a fresh array (device values are never mutated in place except through `+=`, whose
//! aliasing the interpreter checks with [`DTensor::alias`]). Broadcasting, permutes and the
//! element walks are ndarray's (`broadcast`, `permuted_axes`, `Zip`); what is torch's and not
//! NumPy's is here, once: the result type of an operation ([`crate::ty`]), the rounding of
//! every result to it, int32 wrapping, Python's floor division, the float-to-int cast that is
//! undefined in torch, and the messages of shape errors.

use crate::error::{EvalErrorKind as K, Res, err};
use crate::ty::{I64_EXACT, Operand, Ty, r32, rbf, result_type, wrap32};
use lang::ir::{BinOp, Span};
use ndarray::{
    Array, Array1, Array2, Array3, Array4, ArrayD, ArrayView, ArrayViewD, CowArray, Dimension,
    IxDyn,
};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_ALIAS: AtomicU64 = AtomicU64::new(1);

/// A fresh alias id (a new storage in torch's sense).
pub(crate) fn fresh_alias() -> u64 {
    NEXT_ALIAS.fetch_add(1, Ordering::Relaxed)
}

thread_local! {
    /// The largest finite magnitude of a floating-point value computed on this thread since
    /// the last [`Watermark::start`] (see [`crate::Outputs::magnitude`]).
    static WATERMARK: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
    /// The absolute float32 rounding budget of the matrix products computed on this thread
    /// since the last [`Watermark::start`] (see [`crate::Outputs::dot_atol`]), and the relative
    /// error the products' results may carry into later products ([`observe_dot`]).
    static DOT_BUDGET: std::cell::Cell<(f64, f64)> = const { std::cell::Cell::new((0.0, 0.0)) };
}

/// One evaluation's magnitude watermark and dot rounding budget: started when a plan runs,
/// read when it returns; the values of an enclosing evaluation on the same thread are restored
/// on drop.
pub(crate) struct Watermark {
    outer: f64,
    outer_dot: (f64, f64),
}

impl Watermark {
    /// Starts counting from zero.
    pub fn start() -> Watermark {
        Watermark {
            outer: WATERMARK.with(|w| w.replace(0.0)),
            outer_dot: DOT_BUDGET.with(|w| w.replace((0.0, 0.0))),
        }
    }

    /// The largest finite float magnitude computed since the start.
    pub fn read(&self) -> f64 {
        WATERMARK.with(|w| w.get())
    }

    /// The absolute dot rounding budget gathered since the start.
    pub fn dot_atol(&self) -> f64 {
        DOT_BUDGET.with(|w| w.get().0)
    }
}

impl Drop for Watermark {
    fn drop(&mut self) {
        let inner = self.read();
        WATERMARK.with(|w| w.set(self.outer.max(inner)));
        let (atol, rel) = DOT_BUDGET.with(|w| w.get());
        let (outer_atol, outer_rel) = self.outer_dot;
        DOT_BUDGET.with(|w| w.set((outer_atol.max(atol), outer_rel.max(rel))));
    }
}

/// The largest relative error a product's result is taken to carry into later products
/// ([`observe_dot`]).
const DOT_REL_CAP: f64 = 1e-3;

/// Adds one matrix product's float32 rounding budget (`sums[e]` its exact sums, `mags[e]` the
/// sums of its terms' magnitudes, `k` terms each). An engine summing `k` float32 terms in any
/// order errs by at most `k * 2^-24 * mags[e]` (the classic bound `gamma_k`); factors that
/// already carry a relative error `b` (an earlier product's result) add `b * mags[e]`. So the
/// product adds `(b + k * 2^-24) * max(mags)` to the absolute budget (errors of values later
/// added together add up), and its result carries `(b + k * 2^-24) * mags[e] / |sums[e]|`
/// relative error, the worst element's, at most [`DOT_REL_CAP`]. Measured: the generator's
/// `acc += hl.dot(hl.dot(w, w.T), w)` over 7 tiles of `torch.arange(-896, 896)` rows, whose
/// tiles' products of ~4e10 cancel to ~1.6e8 in `acc`, erred by 2.5e4 (1.6e-4 relative) in
/// pallas-sim, over float32's tolerance (1 false finding in 20,000 profile cases, `--seed 94`).
pub(crate) fn observe_dot(sums: &[f64], mags: &[f64], k: usize) {
    let (mut ratio, mut largest) = (1.0f64, 0.0f64);
    for (&s, &g) in sums.iter().zip(mags) {
        if g > 0.0 && g.is_finite() {
            largest = largest.max(g);
            ratio = ratio.max(if s == 0.0 { f64::INFINITY } else { g / s.abs() });
        }
    }
    let unit = k as f64 * f64::powi(2.0, -24);
    DOT_BUDGET.with(|w| {
        let (atol, rel) = w.get();
        let each = rel + unit;
        w.set((
            atol + each * largest,
            rel.max((each * ratio).min(DOT_REL_CAP)),
        ));
    });
}

/// Raises the watermark to the largest finite magnitude in `data`.
pub(crate) fn observe(data: &[f64]) {
    // The largest of a set is the same in any order, so eight running maxima over chunks of
    // eight, combined at the end, give the same value as one left to right; independent lanes
    // vectorize (`maxpd`), one running maximum is a chain of selects (DTensor::new was 3.5%
    // of a 2000-case campaign's instructions, callgrind 2026-12-05). NaN and infinities are
    // read as 0.0 (they fail `a < INFINITY`), so `m` is the largest finite magnitude, from +0.0.
    let finite_abs = |v: f64| {
        let a = v.abs();
        if a < f64::INFINITY { a } else { 0.0 }
    };
    let max = |m: f64, a: f64| if a > m { a } else { m };
    let chunks = data.chunks_exact(8);
    let rest = chunks.remainder();
    let mut lanes = [0.0f64; 8];
    for c in chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = max(*l, finite_abs(v));
        }
    }
    let m = rest
        .iter()
        .map(|&v| finite_abs(v))
        .chain(lanes)
        .fold(0.0f64, max);
    WATERMARK.with(|w| {
        if m > w.get() {
            w.set(m);
        }
    });
}

/// The most elements one value may have (a budget, so a case cannot exhaust memory).
pub(crate) const MAX_NUMEL: usize = 1 << 24;

/// A dense device tensor.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DTensor {
    /// Element type.
    pub ty: Ty,
    /// Values in standard layout, each exact in `ty`.
    pub data: ArrayD<f64>,
    /// Which torch storage this value would share: views keep their source's id, fresh results
    /// get a new one. A subscript of a host tensor in a kernel is a load, a fresh value: Helion
    /// 1.5.1 copies it in its eager mode and in its Pallas backend alike (measured:
    /// `state = x[0, :, :]; state += 1.0` leaves `x` as it was under `HELION_INTERPRET=1` and
    /// under the Pallas backend, where eager torch would write through the view).
    pub alias: u64,
}

/// Runs `$body` with `$v` bound to `$a` (any array or view of dynamic rank) at its fixed rank,
/// ndarray's `Ix0` to `Ix4` (values of cases have at most four dims; larger ranks keep
/// `IxDyn`): a dynamic-rank array checks its layout, computes strides, slices and walks its
/// elements through slices of dims at every call, a fixed-rank one through arrays.
macro_rules! at_fixed_rank {
    ($a:expr, |$v:ident| $body:expr) => {{
        let a = $a;
        match a.ndim() {
            0 => {
                let $v = a.into_dimensionality::<ndarray::Ix0>().expect("rank 0");
                $body
            }
            1 => {
                let $v = a.into_dimensionality::<ndarray::Ix1>().expect("rank 1");
                $body
            }
            2 => {
                let $v = a.into_dimensionality::<ndarray::Ix2>().expect("rank 2");
                $body
            }
            3 => {
                let $v = a.into_dimensionality::<ndarray::Ix3>().expect("rank 3");
                $body
            }
            4 => {
                let $v = a.into_dimensionality::<ndarray::Ix4>().expect("rank 4");
                $body
            }
            _ => {
                let $v = a;
                $body
            }
        }
    }};
}
pub(crate) use at_fixed_rank;

/// `a` in standard layout: the array itself when it is, a row-major copy otherwise (a
/// permuted or broadcast view). Every [`DTensor`] holds one, so its values are a slice in
/// row-major order, the order `.sum`, casts and the outputs read them in. The copy is made
/// at `a`'s fixed rank ([`at_fixed_rank`], [`extend_values`]).
pub(crate) fn standard(a: ArrayViewD<'_, f64>) -> ArrayD<f64> {
    at_fixed_rank!(a, |a| {
        if a.is_standard_layout() {
            return a.to_owned().into_dyn();
        }
        let mut values = Vec::with_capacity(a.len());
        extend_values(&mut values, a.view());
        Array::from_shape_vec(a.raw_dim(), values)
            .expect("values fill the shape")
            .into_dyn()
    })
}

/// Appends the elements of `a` in row-major order: the values as one slice when `a` is in
/// standard layout; a row at a time (`rows()`, each row `as_slice`) when its rows are
/// contiguous (a slice of leading dims, `x[:, a:b]`), as ndarray's general walk goes element
/// by element (`to_vec_mapped` was 3% of the reference's samples on generated cases, perf
/// 2026-12-05); else ndarray's walk at `a`'s rank.
pub(crate) fn extend_values<D: Dimension>(values: &mut Vec<f64>, a: ArrayView<'_, f64, D>) {
    if let Some(s) = a.as_slice() {
        return values.extend_from_slice(s);
    }
    let n = a.ndim();
    if n > 1 && a.strides()[n - 1] == 1 && a.shape()[n - 1] > 1 {
        for row in a.rows() {
            values.extend_from_slice(row.as_slice().expect("a row of unit stride is contiguous"));
        }
    } else {
        // `for_each` is ndarray's fold, a loop along the innermost axis; `extend` would call
        // the element iterator's `next` for every element (1.3M instructions of a 1000-case
        // bench's reference, callgrind 2026-12-05).
        a.iter().for_each(|&x| values.push(x));
    }
}

/// Row-major `values` as an array of `shape`, made at its fixed rank (ndarray's `Ix1` to `Ix4`
/// constructors check the shape and compute strides on arrays, the dynamic-rank one on
/// slices) and seen with dynamic rank.
pub(crate) fn from_shape_vec(shape: &[usize], values: Vec<f64>) -> ArrayD<f64> {
    const FILL: &str = "values fill the shape";
    match *shape {
        [n] => {
            assert_eq!(n, values.len(), "{FILL}");
            Array1::from_vec(values).into_dyn()
        }
        [a, b] => Array2::from_shape_vec((a, b), values)
            .expect(FILL)
            .into_dyn(),
        [a, b, c] => Array3::from_shape_vec((a, b, c), values)
            .expect(FILL)
            .into_dyn(),
        [a, b, c, d] => Array4::from_shape_vec((a, b, c, d), values)
            .expect(FILL)
            .into_dyn(),
        _ => ArrayD::from_shape_vec(IxDyn(shape), values).expect(FILL),
    }
}

impl DTensor {
    /// A fresh tensor: every computed value is made here, so its float magnitudes raise the
    /// evaluation's [`Watermark`].
    pub fn new(ty: Ty, data: ArrayD<f64>) -> DTensor {
        debug_assert!(data.is_standard_layout());
        if ty.is_float() {
            observe(data.as_slice().expect("standard layout"));
        }
        DTensor {
            ty,
            data,
            alias: fresh_alias(),
        }
    }

    /// A fresh tensor of `shape` from row-major `values`.
    pub fn from_vec(ty: Ty, shape: &[usize], values: Vec<f64>) -> DTensor {
        DTensor::new(ty, from_shape_vec(shape, values))
    }

    /// Dimensions.
    pub fn shape(&self) -> &[usize] {
        self.data.shape()
    }

    /// The values in row-major order.
    pub fn values(&self) -> &[f64] {
        self.data
            .as_slice()
            .expect("a device value is in standard layout")
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.data.len()
    }
}

/// A Python scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scalar {
    /// A Python int.
    Int(i64),
    /// A Python float.
    Float(f64),
}

/// An operand of an elementwise operation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Opnd<'a> {
    /// A tensor.
    T(&'a DTensor),
    /// A Python scalar.
    S(Scalar),
}

impl Opnd<'_> {
    pub(crate) fn operand(&self) -> Operand {
        match self {
            Opnd::T(t) if t.shape().is_empty() => Operand::ZeroDim(t.ty),
            Opnd::T(t) => Operand::Dim(t.ty),
            Opnd::S(Scalar::Int(_)) => Operand::PyInt,
            Opnd::S(Scalar::Float(_)) => Operand::PyFloat,
        }
    }

    pub(crate) fn shape(&self) -> &[usize] {
        match self {
            Opnd::T(t) => t.shape(),
            Opnd::S(_) => &[],
        }
    }
}

/// The broadcast of two shapes (numpy/torch rules), or a shape-mismatch error.
pub(crate) fn broadcast_shapes(a: &[usize], b: &[usize], span: Span) -> Res<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (da, db) {
            _ if da == db => da,
            (1, d) | (d, 1) => d,
            _ => {
                return err(
                    K::ShapeMismatch,
                    span,
                    format!("shapes {a:?} and {b:?} do not broadcast (dim {i}: {da} vs {db})"),
                );
            }
        };
    }
    Ok(out)
}

/// The values of an operand of an elementwise operation in computation type `c`, row-major,
/// with its shape (a Python scalar has shape `[]`): the tensor's own slice when its type is
/// `c`. [`operand_values`] as a slice, for [`binary`].
fn operand_slice<'a>(o: Opnd<'a>, c: Ty, span: Span) -> Res<(Cow<'a, [f64]>, &'a [usize])> {
    match o {
        Opnd::T(t) if t.ty == c => Ok((Cow::Borrowed(t.values()), t.shape())),
        Opnd::T(t) => {
            let mut v = t.values().to_vec();
            cast_slice(&mut v, t.ty, c, span)?;
            Ok((Cow::Owned(v), t.shape()))
        }
        Opnd::S(s) => Ok((Cow::Owned(vec![scalar_in(s, c, span)?]), &[])),
    }
}

/// The values of an operand of `shape` broadcast to `out`, as a slice of either `out`'s
/// element count or one element: its own values when it has `out`'s shape or one element
/// (Python scalars, 0-dim tensors), else ndarray's `broadcast` of it to `out` copied in
/// row-major order ([`standard`]). Not generic over the operation, so every operation
/// shares one broadcast path (see [`zip_with`]).
fn broadcast_values<'a>(values: Cow<'a, [f64]>, shape: &[usize], out: &[usize]) -> Cow<'a, [f64]> {
    if shape == out || values.len() == 1 {
        return values;
    }
    let v = ArrayViewD::from_shape(IxDyn(shape), &values).expect("values fill the shape");
    let b = v
        .broadcast(IxDyn(out))
        .expect("checked by broadcast_shapes");
    let (values, offset) = standard(b).into_raw_vec_and_offset();
    debug_assert_eq!(
        offset.unwrap_or(0),
        0,
        "a fresh array starts at its first element"
    );
    Cow::Owned(values)
}

/// Applies `f` elementwise to `x` and `y`, each either `out`'s element count or one element
/// ([`broadcast_values`]): a fresh array of shape `out` in standard layout. The code generic
/// over `f` (one copy per operation and type, some twenty) is only these contiguous loops:
/// with a `Zip` at each fixed rank per operation the reference ran as many instructions but
/// had twice the instruction-cache misses of the hand-written one it replaced, 10% slower
/// (callgrind `--cache-sim=yes` of `bench --cases 1000`, 2026-12-05).
fn zip_with(x: &[f64], y: &[f64], out: &[usize], f: impl Fn(f64, f64) -> f64) -> ArrayD<f64> {
    let values: Vec<f64> = if x.len() == y.len() {
        x.iter().zip(y).map(|(&x, &y)| f(x, y)).collect()
    } else if x.len() == 1 {
        let x = x[0];
        y.iter().map(|&y| f(x, y)).collect()
    } else {
        let y = y[0];
        x.iter().map(|&x| f(x, y)).collect()
    };
    from_shape_vec(out, values)
}

/// Python/torch floor division of integer values (the divisor is non-zero).
#[inline]
fn int_floor_div(x: f64, y: f64) -> f64 {
    let (a, b) = (x as i64, y as i64);
    let q = a / b;
    let q = if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    };
    q as f64
}

/// torch's `div_floor_floating` (also CPython's float `//`), each step rounded by `r`.
#[inline]
pub(crate) fn float_floor_div(a: f64, b: f64, r: impl Fn(f64) -> f64) -> f64 {
    if b == 0.0 {
        return r(a / b);
    }
    let m = r(a % b);
    let mut div = r(r(a - m) / b);
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div = r(div - 1.0);
    }
    if div != 0.0 {
        let mut fl = div.floor();
        if div - fl > 0.5 {
            fl += 1.0;
        }
        fl
    } else {
        0.0f64.copysign(a / b)
    }
}

/// Casts an exact value of `from` to `to` as torch's `.to(dtype)` / `copy_` do.
pub(crate) fn cast_value(v: f64, from: Ty, to: Ty, span: Span) -> Res<f64> {
    Ok(match to {
        Ty::F32 => r32(v),
        Ty::Bf16 => rbf(v),
        // torch's `bool(x)`: anything but zero (NaN included) is true.
        Ty::Bool => f64::from(u8::from(v != 0.0)),
        Ty::I32 | Ty::I64 if from.is_float() => {
            let t = v.trunc();
            let ok = match to {
                Ty::I32 => t.is_finite() && (-2147483648.0..=2147483647.0).contains(&t),
                Ty::I64 => t.is_finite() && t.abs() <= I64_EXACT,
                Ty::F32 | Ty::Bf16 | Ty::Bool => {
                    unreachable!("float and bool targets are cast by the arms above")
                }
            };
            if !ok {
                return err(
                    K::Overflow,
                    span,
                    format!("casting {v} to {} is undefined in torch", to.name()),
                );
            }
            t
        }
        Ty::I32 => wrap32(v),
        Ty::I64 => v,
    })
}

/// [`cast_value`] over a slice, with the float targets' rounding hoisted out of the per-element
/// match (the same values; `cast_value` and `cast` were 2% of a campaign's instructions).
fn cast_slice(data: &mut [f64], from: Ty, to: Ty, span: Span) -> Res<()> {
    match to {
        Ty::F32 => data.iter_mut().for_each(|v| *v = r32(*v)),
        Ty::Bf16 => data.iter_mut().for_each(|v| *v = rbf(*v)),
        Ty::I32 | Ty::I64 | Ty::Bool => {
            for v in data.iter_mut() {
                *v = cast_value(*v, from, to, span)?;
            }
        }
    }
    Ok(())
}

/// `t.to(ty)`: the same tensor when the type does not change (torch returns `self`).
pub(crate) fn cast(t: DTensor, to: Ty, span: Span) -> Res<DTensor> {
    if t.ty == to {
        return Ok(t);
    }
    let from = t.ty;
    let mut data = t.data;
    let widening = from == Ty::Bf16 && to == Ty::F32 || from == Ty::I32 && to == Ty::I64;
    if !widening {
        cast_slice(
            data.as_slice_mut()
                .expect("a device value is in standard layout"),
            from,
            to,
            span,
        )?;
    }
    Ok(DTensor {
        ty: to,
        data,
        alias: fresh_alias(),
    })
}

/// Converts a Python scalar to the computation type `c` (the "opmath" type: float32 for both
/// float types, as torch's CPU kernels read a scalar operand).
fn scalar_in(s: Scalar, c: Ty, span: Span) -> Res<f64> {
    match (s, c) {
        (Scalar::Int(i), Ty::F32 | Ty::Bf16) => Ok(r32(i as f64)),
        (Scalar::Float(f), Ty::F32 | Ty::Bf16) => Ok(r32(f)),
        (Scalar::Int(i), Ty::I32) => {
            if i32::try_from(i).is_err() {
                return err(
                    K::Overflow,
                    span,
                    format!("{i} does not fit an int32 operand"),
                );
            }
            Ok(i as f64)
        }
        (Scalar::Int(i), Ty::I64) => {
            if (i as f64).abs() > I64_EXACT {
                return err(
                    K::Overflow,
                    span,
                    format!("{i} is beyond the reference's int64 range"),
                );
            }
            Ok(i as f64)
        }
        (Scalar::Int(_) | Scalar::Float(_), Ty::Bool) => err(
            K::TypeError,
            span,
            "a Python scalar in boolean arithmetic is not part of the reference",
        ),
        (Scalar::Float(_), Ty::I32 | Ty::I64) => err(
            K::TypeError,
            span,
            "a float scalar cannot take part in integer arithmetic",
        ),
    }
}

/// The values of an operand in computation type `c` (a Python scalar as a 0-dim array).
pub(crate) fn operand_values<'a>(o: &Opnd<'a>, c: Ty, span: Span) -> Res<CowArray<'a, f64, IxDyn>> {
    match o {
        Opnd::T(t) if t.ty == c => Ok(t.data.view().into()),
        Opnd::T(t) => {
            let mut v = t.data.clone();
            cast_slice(
                v.as_slice_mut()
                    .expect("a device value is in standard layout"),
                t.ty,
                c,
                span,
            )?;
            Ok(v.into())
        }
        Opnd::S(s) => Ok(ndarray::arr0(scalar_in(*s, c, span)?).into_dyn().into()),
    }
}

/// The result type of `a op b` (true division of integers gives float32).
pub(crate) fn binary_type(op: BinOp, a: &Opnd<'_>, b: &Opnd<'_>) -> Ty {
    let r = result_type(&[a.operand(), b.operand()]);
    if op == BinOp::Div && !r.is_float() {
        Ty::F32
    } else {
        r
    }
}

macro_rules! elementwise {
    ($op:expr, $a:expr, $b:expr, $out:expr, $round:expr) => {{
        let round = $round;
        match $op {
            BinOp::Add => zip_with($a, $b, $out, |x, y| round(x + y)),
            BinOp::Sub => zip_with($a, $b, $out, |x, y| round(x - y)),
            BinOp::Mul => zip_with($a, $b, $out, |x, y| round(x * y)),
            BinOp::Div => zip_with($a, $b, $out, |x, y| round(x / y)),
            BinOp::FloorDiv => unreachable!("floor division is dispatched separately"),
        }
    }};
}

/// `a op b` on tensors and scalars (at least one a tensor), torch semantics.
pub(crate) fn binary(op: BinOp, a: Opnd<'_>, b: Opnd<'_>, span: Span) -> Res<DTensor> {
    let c = binary_type(op, &a, &b);
    let out_shape = broadcast_shapes(a.shape(), b.shape(), span)?;
    let n: usize = out_shape.iter().product();
    if n > MAX_NUMEL {
        return err(
            K::Budget,
            span,
            format!("a result of {n} elements exceeds the budget"),
        );
    }
    let (av, ashape) = operand_slice(a, c, span)?;
    let (bv, bshape) = operand_slice(b, c, span)?;
    // Before broadcasting: a zero divisor is an error even where the result is empty.
    if op == BinOp::FloorDiv && matches!(c, Ty::I32 | Ty::I64) && bv.contains(&0.0) {
        return err(K::DivisionByZero, span, "integer floor division by zero");
    }
    let av = broadcast_values(av, ashape, &out_shape);
    let bv = broadcast_values(bv, bshape, &out_shape);
    let data = match (op, c) {
        // torch's bool arithmetic (`+` is "or", `-` raises) has no kernel that needs it.
        (_, Ty::Bool) => {
            return err(
                K::TypeError,
                span,
                "arithmetic on two boolean masks is not part of the reference",
            );
        }
        (BinOp::FloorDiv, Ty::I32 | Ty::I64) => {
            let w = c == Ty::I32;
            zip_with(&av, &bv, &out_shape, |x, y| {
                let q = int_floor_div(x, y);
                if w { wrap32(q) } else { q }
            })
        }
        (BinOp::FloorDiv, Ty::F32) => {
            zip_with(&av, &bv, &out_shape, |x, y| r32(float_floor_div(x, y, r32)))
        }
        (BinOp::FloorDiv, Ty::Bf16) => {
            zip_with(&av, &bv, &out_shape, |x, y| rbf(float_floor_div(x, y, r32)))
        }
        (_, Ty::F32) => elementwise!(op, &av, &bv, &out_shape, r32),
        (_, Ty::Bf16) => elementwise!(op, &av, &bv, &out_shape, rbf),
        // Multiplied as integers: an f64 product past 2^53 drops the low bits that the
        // wrap to int32 keeps (`i32::MAX * i32::MAX` is 1 in torch).
        (BinOp::Mul, Ty::I32) => zip_with(&av, &bv, &out_shape, |x, y| {
            f64::from((x as i64).wrapping_mul(y as i64) as i32)
        }),
        (_, Ty::I32) => elementwise!(op, &av, &bv, &out_shape, wrap32),
        (_, Ty::I64) => {
            let d = elementwise!(op, &av, &bv, &out_shape, |v: f64| v);
            if d.iter().any(|v| v.abs() > I64_EXACT) {
                return err(
                    K::Overflow,
                    span,
                    "an int64 result leaves the exact range ±2^53",
                );
            }
            d
        }
    };
    Ok(DTensor::new(c, data))
}

/// Resolves a possibly negative `dim` of a rank-`rank` tensor (`extra` = 1 for `unsqueeze`).
pub(crate) fn norm_dim(dim: i64, rank: usize, extra: usize, what: &str, span: Span) -> Res<usize> {
    let r = (rank + extra) as i64;
    let (lo, hi) = if r == 0 { (-1, 0) } else { (-r, r - 1) };
    if dim < lo || dim > hi {
        return err(
            K::InvalidArgument,
            span,
            format!("{what}: dim {dim} is out of range for a tensor of rank {rank}"),
        );
    }
    Ok(if dim < 0 {
        (dim + r.max(1)) as usize
    } else {
        dim as usize
    })
}

/// The shape of `reshape(dims)` of a tensor of `numel` elements (one `-1` allowed).
pub(crate) fn reshape_shape(
    numel: usize,
    from: &[usize],
    dims: &[i64],
    span: Span,
) -> Res<Vec<usize>> {
    let holes = dims.iter().filter(|&&d| d == -1).count();
    if holes > 1 || dims.iter().any(|&d| d < -1) {
        return err(K::InvalidArgument, span, format!("invalid shape {dims:?}"));
    }
    let known: usize = dims
        .iter()
        .filter(|&&d| d != -1)
        .map(|&d| d as usize)
        .product();
    let shape: Vec<usize> = if holes == 1 {
        if known == 0 || !numel.is_multiple_of(known) {
            return err(
                K::ShapeMismatch,
                span,
                format!("shape {dims:?} is invalid for input {from:?} of size {numel}"),
            );
        }
        dims.iter()
            .map(|&d| if d == -1 { numel / known } else { d as usize })
            .collect()
    } else {
        dims.iter().map(|&d| d as usize).collect()
    };
    if shape.iter().product::<usize>() != numel {
        return err(
            K::ShapeMismatch,
            span,
            format!("shape {dims:?} is invalid for input {from:?} of size {numel}"),
        );
    }
    Ok(shape)
}

/// `t.permute(dims)` (a copy in the permuted order).
pub(crate) fn permute(t: &DTensor, dims: &[i64], span: Span) -> Res<DTensor> {
    let r = t.shape().len();
    if dims.len() != r {
        return err(
            K::InvalidArgument,
            span,
            format!(
                "permute: {} dims given for a tensor of rank {r}",
                dims.len()
            ),
        );
    }
    let mut perm = Vec::with_capacity(r);
    for &d in dims {
        let d = norm_dim(d, r, 0, "permute", span)?;
        if perm.contains(&d) {
            return err(
                K::InvalidArgument,
                span,
                format!("permute: dim {d} repeats"),
            );
        }
        perm.push(d);
    }
    let data = standard(t.data.view().permuted_axes(IxDyn(&perm)));
    Ok(DTensor {
        ty: t.ty,
        data,
        alias: t.alias,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ty: Ty, shape: Vec<usize>, data: Vec<f64>) -> DTensor {
        DTensor::from_vec(ty, &shape, data)
    }

    #[test]
    fn int32_products_wrap_exactly() {
        let max = f64::from(i32::MAX);
        let a = t(Ty::I32, vec![2], vec![max, -65537.0]);
        let b = t(Ty::I32, vec![2], vec![max, 2147483.0]);
        let c = binary(BinOp::Mul, Opnd::T(&a), Opnd::T(&b), Span::default()).unwrap();
        assert_eq!(
            c.values(),
            vec![1.0, f64::from((-65537i64 * 2147483) as i32)]
        );
    }

    #[test]
    fn broadcasting_and_promotion() {
        let a = t(Ty::I32, vec![2, 1], vec![1.0, 2.0]);
        let b = t(Ty::F32, vec![3], vec![0.5, 1.5, 2.5]);
        let c = binary(BinOp::Add, Opnd::T(&a), Opnd::T(&b), Span::default()).unwrap();
        assert_eq!((c.ty, c.shape()), (Ty::F32, &[2, 3][..]));
        assert_eq!(c.values(), vec![1.5, 2.5, 3.5, 2.5, 3.5, 4.5]);
        let bad = t(Ty::F32, vec![4], vec![0.0; 4]);
        let e = binary(BinOp::Add, Opnd::T(&b), Opnd::T(&bad), Span::default()).unwrap_err();
        assert_eq!(e.kind, K::ShapeMismatch);
    }

    #[test]
    fn int32_wraps_and_int_division_is_float() {
        let a = t(Ty::I32, vec![2], vec![2147483647.0, 7.0]);
        let s = binary(
            BinOp::Add,
            Opnd::T(&a),
            Opnd::S(Scalar::Int(1)),
            Span::default(),
        )
        .unwrap();
        assert_eq!(s.values(), vec![-2147483648.0, 8.0]);
        let d = binary(
            BinOp::Div,
            Opnd::T(&a),
            Opnd::S(Scalar::Int(2)),
            Span::default(),
        )
        .unwrap();
        assert_eq!(d.ty, Ty::F32);
        assert_eq!(d.values()[1], 3.5);
        let f = binary(
            BinOp::FloorDiv,
            Opnd::T(&a),
            Opnd::S(Scalar::Int(-2)),
            Span::default(),
        )
        .unwrap();
        assert_eq!(f.values()[1], -4.0);
        let z = binary(
            BinOp::FloorDiv,
            Opnd::T(&a),
            Opnd::S(Scalar::Int(0)),
            Span::default(),
        );
        assert_eq!(z.unwrap_err().kind, K::DivisionByZero);
    }

    #[test]
    fn bf16_arithmetic_rounds_through_f32() {
        let a = t(Ty::Bf16, vec![1], vec![1.0]);
        let b = t(Ty::Bf16, vec![1], vec![2f64.powi(-8)]);
        let c = binary(BinOp::Add, Opnd::T(&a), Opnd::T(&b), Span::default()).unwrap();
        assert_eq!((c.ty, c.values()[0]), (Ty::Bf16, 1.0)); // tie to even
        let x = binary(
            BinOp::Mul,
            Opnd::T(&a),
            Opnd::S(Scalar::Float(0.1)),
            Span::default(),
        )
        .unwrap();
        assert_eq!(x.ty, Ty::Bf16);
        assert_eq!(x.values()[0], rbf(0.1));
    }

    #[test]
    fn float_to_int_cast_of_nan_is_refused() {
        let a = t(Ty::F32, vec![2], vec![1.7, f64::NAN]);
        assert_eq!(
            cast(a, Ty::I32, Span::default()).unwrap_err().kind,
            K::Overflow
        );
        let b = t(Ty::F32, vec![2], vec![-1.7, 2.9]);
        assert_eq!(
            cast(b, Ty::I32, Span::default()).unwrap().values(),
            vec![-1.0, 2.0]
        );
    }

    #[test]
    fn permute_reorders() {
        let a = t(Ty::F32, vec![2, 3], (0..6).map(f64::from).collect());
        let p = permute(&a, &[1, 0], Span::default()).unwrap();
        assert_eq!(p.shape(), &[3, 2]);
        assert_eq!(p.values(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    }

    #[test]
    fn float_floor_division_matches_python() {
        let cases = [
            (7.0, 2.0, 3.0),
            (-7.0, 2.0, -4.0),
            (7.0, -2.0, -4.0),
            (-7.5, -2.0, 3.0),
        ];
        for (a, b, q) in cases {
            assert_eq!(float_floor_div(a, b, |v| v), q, "{a} // {b}");
        }
    }
}
