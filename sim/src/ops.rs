//! Array operations with JAX's semantics on XLA:CPU: promotion, broadcasting, elementwise
//! arithmetic rounded per operation to the result dtype (XLA computes bfloat16 in float32 and
//! rounds after every op, which equals exact bfloat16 arithmetic: double rounding through a
//! format with at least 2p+2 bits is innocuous), `jnp.floor_divide`/`jnp.remainder` as JAX
//! builds them from `lax.div`/`lax.rem`, NaN-propagating `minimum`/`maximum`, saturating
//! float→int conversion, basic indexing of values (out-of-range indices clamp), reshapes,
//! transposes and `broadcast_to`.

use super::error::{ErrorKind, SimError, SimResult};
use super::value::{Arr, Cat, Data, MAX_RANK, Shape, pool_vec, round_bf16, wrap_i32};
use lang::pallas::{BinOp, CmpOp};
use lang::tensor::DType;

fn trace_err(kind: ErrorKind, msg: impl Into<String>) -> SimError {
    SimError::trace(kind, msg)
}

/// NumPy broadcasting of two shapes.
pub(crate) fn broadcast_shapes(a: Shape, b: Shape, what: &str) -> SimResult<Shape> {
    let (ra, rb) = (a.rank(), b.rank());
    let r = ra.max(rb);
    let mut out = [0usize; MAX_RANK];
    for (k, slot) in out.iter_mut().enumerate().take(r) {
        let da = if k + ra >= r { a.dims()[k + ra - r] } else { 1 };
        let db = if k + rb >= r { b.dims()[k + rb - r] } else { 1 };
        *slot = lang::ir::arith::broadcast_dim(da, db).ok_or_else(|| {
            trace_err(
                ErrorKind::TypeError,
                format!("{what} got incompatible shapes for broadcasting: {a:?}, {b:?}"),
            )
        })?;
    }
    Shape::new(&out[..r])
}

/// Strides (0 on broadcast dims) to read `src` as `out`-shaped.
fn bcast_strides(src: Shape, out: Shape) -> [usize; MAX_RANK] {
    let st = src.strides();
    let mut s = [0usize; MAX_RANK];
    let (rs, ro) = (src.rank(), out.rank());
    for (k, (&d, &stride)) in src.dims().iter().zip(&st).enumerate() {
        s[k + ro - rs] = if d == 1 { 0 } else { stride };
    }
    s
}

/// Calls `f(a_index, b_index)` for each element of `out` in row-major order.
fn for_each2(
    out: Shape,
    sa: [usize; MAX_RANK],
    sb: [usize; MAX_RANK],
    mut f: impl FnMut(usize, usize),
) {
    for_each_row2(out, sa, sb, |pa, la, pb, lb, len| {
        for i in 0..len {
            f(pa + i * la, pb + i * lb);
        }
    });
}

/// Calls `row(a_start, a_step, b_start, b_step, len)` for each row (run along the last dim)
/// of `out` in row-major order, `len > 0`; a 0-d `out` is one row of one element. A step is 1
/// (a row-major operand) or 0 (broadcast along the row), so that callers can work on whole
/// rows (slices) instead of indexing element by element.
fn for_each_row2(
    out: Shape,
    sa: [usize; MAX_RANK],
    sb: [usize; MAX_RANK],
    mut row: impl FnMut(usize, usize, usize, usize, usize),
) {
    let r = out.rank();
    if r == 0 {
        row(0, 0, 0, 0, 1);
        return;
    }
    let dims = out.dims();
    let last = r - 1;
    let n_last = dims[last];
    if n_last == 0 {
        return;
    }
    let (la, lb) = (sa[last], sb[last]);
    let outer: usize = dims[..last].iter().product();
    let mut idx = [0usize; MAX_RANK];
    let (mut ia, mut ib) = (0usize, 0usize);
    for _ in 0..outer {
        row(ia, la, ib, lb, n_last);
        // Advance the outer multi-index.
        let mut k = last;
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            ia += sa[k];
            ib += sb[k];
            if idx[k] < dims[k] {
                break;
            }
            ia -= sa[k] * dims[k];
            ib -= sb[k] * dims[k];
            idx[k] = 0;
        }
    }
}

/// Converts a value of category `from` to category `to` (`astype` / implicit promotion).
#[inline]
pub(crate) fn convert(v: f64, from: Cat, to: Cat) -> f64 {
    if from == to {
        return v;
    }
    match to {
        Cat::Bool => f64::from(u8::from(v != 0.0)),
        Cat::WeakInt | Cat::I32 => {
            if from.is_float() {
                // XLA's float→int conversion: NaN → 0, saturating, truncating toward zero.
                if v.is_nan() {
                    0.0
                } else if v >= 2147483647.0 {
                    2147483647.0
                } else if v <= -2147483648.0 {
                    -2147483648.0
                } else {
                    v.trunc()
                }
            } else {
                v
            }
        }
        Cat::WeakFloat | Cat::F32 | Cat::Bf16 => to.round(v),
    }
}

/// An array converted to a category.
pub(crate) fn cast(a: &Arr, to: Cat) -> Arr {
    if a.cat == to {
        return a.clone();
    }
    if to.dtype() == a.cat.dtype() && to != Cat::Bool && a.cat != Cat::Bool {
        // Only the weak flag changes.
        return Arr {
            cat: to,
            lazy: a.lazy.clone(),
            ..a.clone()
        };
    }
    let data = match &a.data {
        Data::Traced => Data::Traced,
        Data::Scalar(v) => Data::Scalar(convert(*v, a.cat, to)),
        // A bool is 0 or 1, which every category holds as is: `convert` keeps each value, so
        // the values are shared (masks cast to a float dtype are the common case).
        Data::Vals(_) if a.cat == Cat::Bool => a.data.clone(),
        Data::Vals(v) => {
            return Arr {
                konst: a.konst,
                ..convert_all(v, a.cat, to, a.shape)
            };
        }
    };
    Arr {
        cat: to,
        shape: a.shape,
        data,
        konst: a.konst,
        lazy: None,
    }
}

/// `vals` converted from `from` to `to` (distinct categories), as [`convert`] does each value:
/// one loop per target category instead of a `match` per element (most of `ops::cast`'s 34M
/// instructions in callgrind's 2,000-case campaign).
fn convert_all(vals: &[f64], from: Cat, to: Cat, shape: Shape) -> Arr {
    macro_rules! go {
        ($f:expr) => {
            Arr::collect(to, shape, vals.iter().map($f))
        };
    }
    match to {
        Cat::Bool => go!(|&x| f64::from(u8::from(x != 0.0))),
        Cat::WeakInt | Cat::I32 if from.is_float() => go!(|&x| convert(x, from, to)),
        Cat::WeakInt | Cat::I32 => go!(|&x| x),
        Cat::WeakFloat | Cat::F32 => go!(|&x| f64::from(x as f32)),
        Cat::Bf16 => go!(|&x| round_bf16(x)),
    }
}

/// `x.astype(dtype)`.
pub(crate) fn astype(a: &Arr, d: DType) -> Arr {
    cast(a, Cat::of(d))
}

#[inline]
fn i(v: f64) -> i64 {
    v as i64
}

/// `lax.div` on int32: truncating; x / 0 = -1; INT_MIN / -1 = INT_MIN.
#[inline]
fn int_div(a: i64, b: i64) -> i64 {
    if b == 0 {
        -1
    } else {
        i64::from((a as i32).wrapping_div(b as i32))
    }
}

/// `lax.rem` on int32: x % 0 = x.
#[inline]
fn int_rem(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        i64::from((a as i32).wrapping_rem(b as i32))
    }
}

/// `jnp.floor_divide` on ints: `where(sign(a) != sign(b) & rem(a, b) != 0, div - 1, div)`.
#[inline]
fn int_floor_div(a: i64, b: i64) -> i64 {
    let q = int_div(a, b);
    if a.signum() != b.signum() && int_rem(a, b) != 0 {
        i64::from((q as i32).wrapping_sub(1))
    } else {
        q
    }
}

/// `jnp.remainder` on ints.
#[inline]
fn int_mod(a: i64, b: i64) -> i64 {
    let r = int_rem(a, b);
    if r != 0 && ((r < 0) != (b < 0)) {
        i64::from((r as i32).wrapping_add(b as i32))
    } else {
        r
    }
}

fn sign(v: f64) -> f64 {
    if v.is_nan() {
        v
    } else if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// `jnp.floor_divide` on floats (JAX's `_float_divmod`, each op rounded to `cat`).
fn float_floor_div(a: f64, b: f64, cat: Cat) -> f64 {
    let m = cat.round(a % b);
    let mut div = cat.round(cat.round(a - m) / b);
    if m != 0.0 && sign(b) != sign(m) {
        div = cat.round(div - 1.0);
    }
    // lax.round: half away from zero.
    cat.round(div.round())
}

/// `jnp.remainder` on floats.
fn float_mod(a: f64, b: f64, cat: Cat) -> f64 {
    let r = cat.round(a % b);
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
        cat.round(r + b)
    } else {
        r
    }
}

/// The result category of `a op b`.
pub(crate) fn binary_cat(op: BinOp, a: Cat, b: Cat) -> SimResult<Cat> {
    let j = a.join(b);
    match op {
        BinOp::Div => Ok(j.inexact()),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor if j.is_float() => Err(trace_err(
            ErrorKind::TypeError,
            format!("bitwise operation on {}", j.name()),
        )),
        BinOp::Sub if j == Cat::Bool => Err(trace_err(
            ErrorKind::TypeError,
            "numpy boolean subtract is not supported",
        )),
        BinOp::FloorDiv | BinOp::Mod if j == Cat::Bool => Err(SimError::unsupported(
            "floor division or remainder of two bools",
        )),
        BinOp::Add
        | BinOp::Sub
        | BinOp::Mul
        | BinOp::FloorDiv
        | BinOp::Mod
        | BinOp::BitAnd
        | BinOp::BitOr
        | BinOp::BitXor => Ok(j),
    }
}

/// One element of `a op b` in category `cat` (operands already converted to `cat`).
#[inline]
fn apply(op: BinOp, cat: Cat, a: f64, b: f64) -> f64 {
    match cat {
        Cat::Bool => {
            let (x, y) = (a != 0.0, b != 0.0);
            let r = match op {
                BinOp::Add | BinOp::BitOr => x | y,
                BinOp::Mul | BinOp::BitAnd => x & y,
                BinOp::BitXor => x ^ y,
                // Refused by `binary_cat`.
                BinOp::Sub | BinOp::Div | BinOp::FloorDiv | BinOp::Mod => false,
            };
            f64::from(u8::from(r))
        }
        Cat::WeakInt | Cat::I32 => {
            let (x, y) = (i(a), i(b));
            let r = match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::FloorDiv => int_floor_div(x, y),
                BinOp::Mod => int_mod(x, y),
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                // `Div` computes in a float category.
                BinOp::Div => 0,
            };
            // Wrapped as an integer: through an f64, a product past 2^53 loses the low bits
            // the wrap keeps.
            f64::from(r as i32)
        }
        Cat::WeakFloat | Cat::F32 | Cat::Bf16 => match op {
            BinOp::Add => cat.round(a + b),
            BinOp::Sub => cat.round(a - b),
            BinOp::Mul => cat.round(a * b),
            BinOp::Div => cat.round(a / b),
            BinOp::FloorDiv => float_floor_div(a, b, cat),
            BinOp::Mod => float_mod(a, b, cat),
            // Refused by `binary_cat`.
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => f64::NAN,
        },
    }
}

/// Elementwise `f(a, b)` into category `out_cat`, operands converted to `in_cat` first.
fn zip_with(
    a: &Arr,
    b: &Arr,
    in_cat: Cat,
    out_cat: Cat,
    what: &str,
    f: impl Fn(f64, f64) -> f64,
) -> SimResult<Arr> {
    let shape = if a.shape == b.shape {
        a.shape
    } else {
        broadcast_shapes(a.shape, b.shape, what)?
    };
    let konst = a.konst && b.konst;
    let (Some(va), Some(vb)) = (a.vals(), b.vals()) else {
        return Ok(Arr::traced(out_cat, shape));
    };
    let (ca, cb) = (a.cat, b.cat);
    let n = shape.numel();
    // Operands already in the computation category (the common case): no conversions.
    let same = |c: Cat| {
        c == in_cat || (c.dtype() == in_cat.dtype() && c != Cat::Bool && in_cat != Cat::Bool)
    };
    let done = |r: Arr| Ok(Arr { konst, ..r });
    if same(ca) && same(cb) {
        if a.shape == b.shape {
            return done(Arr::collect(
                out_cat,
                shape,
                va.iter().zip(vb.iter()).map(|(&x, &y)| f(x, y)),
            ));
        } else if vb.len() == 1 && va.len() == n {
            let y = vb[0];
            return done(Arr::collect(out_cat, shape, va.iter().map(|&x| f(x, y))));
        } else if va.len() == 1 && vb.len() == n {
            let x = va[0];
            return done(Arr::collect(out_cat, shape, vb.iter().map(|&y| f(x, y))));
        }
        let mut out = pool_vec(n);
        let sa = bcast_strides(a.shape, shape);
        let sb = bcast_strides(b.shape, shape);
        // Row by row: a row of an operand is a slice or one broadcast value (element by
        // element, `ops::for_each2` was 14M instructions of a 2,000-case campaign).
        for_each_row2(shape, sa, sb, |pa, la, pb, lb, len| match (la, lb) {
            (1, 1) => {
                let rows = va[pa..pa + len].iter().zip(&vb[pb..pb + len]);
                out.extend(rows.map(|(&x, &y)| f(x, y)));
            }
            (1, 0) => {
                let y = vb[pb];
                out.extend(va[pa..pa + len].iter().map(|&x| f(x, y)));
            }
            (0, 1) => {
                let x = va[pa];
                out.extend(vb[pb..pb + len].iter().map(|&y| f(x, y)));
            }
            _ => out.extend((0..len).map(|i| f(va[pa + i * la], vb[pb + i * lb]))),
        });
        return Ok(Arr {
            konst,
            ..Arr::new(out_cat, shape, out)
        });
    }
    // Taken only where it is filled: a vector dropped unused would go back to `malloc`, not
    // to the pool.
    let mut out = pool_vec(n);
    if a.shape == b.shape {
        for (&x, &y) in va.iter().zip(vb) {
            out.push(f(convert(x, ca, in_cat), convert(y, cb, in_cat)));
        }
    } else if vb.len() == 1 && va.len() == n {
        let y = convert(vb[0], cb, in_cat);
        for &x in va {
            out.push(f(convert(x, ca, in_cat), y));
        }
    } else if va.len() == 1 && vb.len() == n {
        let x = convert(va[0], ca, in_cat);
        for &y in vb {
            out.push(f(x, convert(y, cb, in_cat)));
        }
    } else {
        let sa = bcast_strides(a.shape, shape);
        let sb = bcast_strides(b.shape, shape);
        for_each2(shape, sa, sb, |pa, pb| {
            out.push(f(convert(va[pa], ca, in_cat), convert(vb[pb], cb, in_cat)));
        });
    }
    Ok(Arr {
        konst,
        ..Arr::new(out_cat, shape, out)
    })
}

/// `a op b` on arrays.
pub(crate) fn binary(op: BinOp, a: &Arr, b: &Arr) -> SimResult<Arr> {
    let cat = binary_cat(op, a.cat, b.cat)?;
    if cat.is_float() && op == BinOp::Div && b.konst && !a.konst {
        // `A / C → A * (1 / C)`: XLA divides by a constant with its float32 reciprocal
        // (bfloat16 too: it computes in float32).
        let c = b.vals().and_then(|v| v.first().copied()).unwrap_or(1.0);
        let r = 1.0f32 / convert(c, b.cat, cat) as f32;
        return zip_with(a, b, cat, cat, "div", |x, _| {
            cat.round(f64::from(x as f32 * r))
        });
    }
    if cat.dtype() == Some(DType::Float32) {
        if let Some(r) = fold_constant_add(op, a, b, cat)? {
            return Ok(r);
        }
        // `A * 1 → A` keeps a folded addend visible to a later add.
        let one = |x: &Arr| x.konst && x.vals().is_some_and(|v| v.first() == Some(&1.0));
        if op == BinOp::Mul
            && a.cat == cat
            && one(b)
            && broadcast_shapes(a.shape, b.shape, "mul")? == a.shape
        {
            return Ok(a.clone());
        }
        if op == BinOp::Mul
            && b.cat == cat
            && one(a)
            && broadcast_shapes(a.shape, b.shape, "mul")? == b.shape
        {
            return Ok(b.clone());
        }
    }
    macro_rules! go {
        ($f:expr) => {
            zip_with(a, b, cat, cat, "binary op", $f)
        };
    }
    match (cat, op) {
        (Cat::F32 | Cat::WeakFloat, BinOp::Add) => go!(|x, y| f64::from((x + y) as f32)),
        (Cat::F32 | Cat::WeakFloat, BinOp::Sub) => go!(|x, y| f64::from((x - y) as f32)),
        (Cat::F32 | Cat::WeakFloat, BinOp::Mul) => go!(|x, y| f64::from((x * y) as f32)),
        (Cat::F32 | Cat::WeakFloat, BinOp::Div) => go!(|x, y| f64::from((x / y) as f32)),
        (Cat::Bf16, BinOp::Add) => go!(|x, y| round_bf16(x + y)),
        (Cat::Bf16, BinOp::Sub) => go!(|x, y| round_bf16(x - y)),
        (Cat::Bf16, BinOp::Mul) => go!(|x, y| round_bf16(x * y)),
        (Cat::WeakInt | Cat::I32, BinOp::Add) => go!(|x, y| wrap_i32(x + y)),
        (Cat::WeakInt | Cat::I32, BinOp::Sub) => go!(|x, y| wrap_i32(x - y)),
        // Wrapped in integers: a product of two int32s can pass 2^53, where an f64 drops the
        // low bits the wrap keeps (`i32::MAX * i32::MAX` is 1 in XLA).
        (Cat::WeakInt | Cat::I32, BinOp::Mul) => {
            go!(|x, y| f64::from(i(x).wrapping_mul(i(y)) as i32))
        }
        // The rest (each arm above is `apply` specialized, its loop inlined).
        _ => go!(|x, y| apply(op, cat, x, y)),
    }
}

/// XLA's reassociation of float32 constants: `A - C → A + (-C)`, `(X + C1) + C2 →
/// X + (C1 + C2)` (also with the constant on the left). `None` when it does not apply.
fn fold_constant_add(op: BinOp, a: &Arr, b: &Arr, cat: Cat) -> SimResult<Option<Arr>> {
    let scalar = |x: &Arr| x.vals().and_then(|v| v.first().copied());
    let (x, c) = match (op, a.konst, b.konst) {
        (BinOp::Add, false, true) => (a, convert(scalar(b).unwrap_or(0.0), b.cat, cat)),
        (BinOp::Add, true, false) => (b, convert(scalar(a).unwrap_or(0.0), a.cat, cat)),
        (BinOp::Sub, false, true) => (a, -convert(scalar(b).unwrap_or(0.0), b.cat, cat)),
        _ => return Ok(None),
    };
    let shape = broadcast_shapes(a.shape, b.shape, "add")?;
    let (base, c) = match &x.lazy {
        Some(l) if x.cat == cat => (l.0.clone(), cat.round(l.1 + c)),
        _ => (cast(x, cat), c),
    };
    let base = if base.shape == shape {
        base
    } else {
        broadcast_to(&base, shape)?
    };
    let data = map(&base, cat, |v| cat.round(v + c));
    Ok(Some(Arr {
        lazy: Some(std::rc::Rc::new((base, c))),
        ..data
    }))
}

/// `a cmp b` on arrays (a bool array).
pub(crate) fn compare(op: CmpOp, a: &Arr, b: &Arr) -> SimResult<Arr> {
    let cat = a.cat.join(b.cat);
    // One loop per operator (no `match` per element).
    macro_rules! go {
        ($f:expr) => {
            zip_with(a, b, cat, Cat::Bool, "comparison", |x, y| {
                f64::from(u8::from($f(x, y)))
            })
        };
    }
    match op {
        CmpOp::Lt => go!(|x: f64, y: f64| x < y),
        CmpOp::Le => go!(|x: f64, y: f64| x <= y),
        CmpOp::Gt => go!(|x: f64, y: f64| x > y),
        CmpOp::Ge => go!(|x: f64, y: f64| x >= y),
        CmpOp::Eq => go!(|x: f64, y: f64| x == y),
        CmpOp::Ne => go!(|x: f64, y: f64| x != y),
    }
}

/// `jnp.minimum` / `jnp.maximum` (NaN-propagating, as XLA's min/max).
pub(crate) fn min_max(max: bool, a: &Arr, b: &Arr) -> SimResult<Arr> {
    let cat = a.cat.join(b.cat);
    zip_with(a, b, cat, cat, if max { "max" } else { "min" }, |x, y| {
        if x.is_nan() || y.is_nan() {
            f64::NAN
        } else if max {
            x.max(y)
        } else {
            x.min(y)
        }
    })
}

/// `-a`.
pub(crate) fn neg(a: &Arr) -> SimResult<Arr> {
    if a.cat == Cat::Bool {
        return Err(trace_err(
            ErrorKind::TypeError,
            "negation of a bool array is not supported",
        ));
    }
    let cat = a.cat;
    Ok(Arr {
        konst: a.konst,
        ..map(a, cat, |x| cat.round(-x))
    })
}

/// Elementwise `f` into category `cat`.
pub(crate) fn map(a: &Arr, cat: Cat, f: impl Fn(f64) -> f64) -> Arr {
    let data = match &a.data {
        Data::Traced => Data::Traced,
        Data::Scalar(v) => Data::Scalar(f(*v)),
        Data::Vals(v) => return Arr::collect(cat, a.shape, v.iter().map(|&x| f(x))),
    };
    Arr {
        cat,
        shape: a.shape,
        data,
        konst: false,
        lazy: None,
    }
}

/// `jnp.where(c, a, b)`.
pub(crate) fn where_(c: &Arr, a: &Arr, b: &Arr) -> SimResult<Arr> {
    let cat = a.cat.join(b.cat);
    let s1 = broadcast_shapes(c.shape, a.shape, "where")?;
    let shape = broadcast_shapes(s1, b.shape, "where")?;
    let (Some(vc), Some(va), Some(vb)) = (c.vals(), a.vals(), b.vals()) else {
        return Ok(Arr::traced(cat, shape));
    };
    if c.shape == shape && a.shape == shape && b.shape == shape {
        // No broadcasting (the common case): one pass over the three arrays.
        let (ca, cb) = (a.cat, b.cat);
        let vals = vc.iter().zip(va.iter().zip(vb)).map(|(&p, (&x, &y))| {
            if p != 0.0 {
                convert(x, ca, cat)
            } else {
                convert(y, cb, cat)
            }
        });
        return Ok(Arr::collect(cat, shape, vals));
    }
    let (sc, sa, sb) = (
        bcast_strides(c.shape, shape),
        bcast_strides(a.shape, shape),
        bcast_strides(b.shape, shape),
    );
    let mut out = pool_vec(shape.numel());
    let mut idx = [0usize; MAX_RANK];
    let r = shape.rank();
    for _ in 0..shape.numel() {
        let (mut pc, mut pa, mut pb) = (0, 0, 0);
        for k in 0..r {
            pc += idx[k] * sc[k];
            pa += idx[k] * sa[k];
            pb += idx[k] * sb[k];
        }
        out.push(if vc[pc] != 0.0 {
            convert(va[pa], a.cat, cat)
        } else {
            convert(vb[pb], b.cat, cat)
        });
        let mut k = r;
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            if idx[k] < shape.dims()[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(Arr::new(cat, shape, out))
}

/// `jnp.broadcast_to(a, shape)`.
pub(crate) fn broadcast_to(a: &Arr, shape: Shape) -> SimResult<Arr> {
    if a.shape == shape {
        return Ok(a.clone());
    }
    let ok = a.shape.rank() <= shape.rank()
        && a.shape.dims().iter().enumerate().all(|(k, &d)| {
            let o = shape.dims()[k + shape.rank() - a.shape.rank()];
            d == o || d == 1
        });
    if !ok {
        return Err(trace_err(
            ErrorKind::ValueError,
            format!(
                "Incompatible shapes for broadcasting: {:?} and requested shape {:?}",
                a.shape, shape
            ),
        ));
    }
    let Some(va) = a.vals() else {
        return Ok(Arr::traced(a.cat, shape));
    };
    let mut out = pool_vec(shape.numel());
    if va.len() == 1 {
        out.resize(shape.numel(), va[0]);
    } else {
        let sa = bcast_strides(a.shape, shape);
        for_each_row2(shape, sa, [0; MAX_RANK], |pa, la, _, _, len| match la {
            1 => out.extend_from_slice(&va[pa..pa + len]),
            _ => out.extend((0..len).map(|i| va[pa + i * la])),
        });
    }
    Ok(Arr {
        konst: a.konst,
        ..Arr::new(a.cat, shape, out)
    })
}

/// `jnp.reshape(a, shape)` (one `-1` is inferred).
pub(crate) fn reshape(a: &Arr, dims: &[i64]) -> SimResult<Arr> {
    let n = a.shape.numel();
    let known: i64 = dims.iter().filter(|&&d| d != -1).product();
    // On the stack: a shape of more than MAX_RANK dims is refused below anyway.
    let mut small = [0i64; MAX_RANK];
    let mut large = Vec::new();
    let resolved: &mut [i64] = if dims.len() <= MAX_RANK {
        &mut small[..dims.len()]
    } else {
        large.resize(dims.len(), 0);
        &mut large
    };
    resolved.copy_from_slice(dims);
    if let Some(p) = dims.iter().position(|&d| d == -1) {
        if known == 0 || n as i64 % known != 0 {
            return Err(trace_err(
                ErrorKind::TypeError,
                format!(
                    "cannot reshape array of shape {:?} into shape {dims:?}",
                    a.shape
                ),
            ));
        }
        resolved[p] = n as i64 / known;
    }
    let shape = Shape::from_i64(resolved)?;
    if shape.numel() != n {
        return Err(trace_err(
            ErrorKind::TypeError,
            format!(
                "cannot reshape array of shape {:?} (size {n}) into shape {dims:?} (size {})",
                a.shape,
                shape.numel()
            ),
        ));
    }
    Ok(a.with_shape(shape))
}

/// `jnp.transpose(a, axes)`.
pub(crate) fn transpose(a: &Arr, axes: &[usize]) -> SimResult<Arr> {
    let r = a.shape.rank();
    let mut seen = [false; MAX_RANK];
    if axes.len() != r
        || axes
            .iter()
            .any(|&x| x >= r || std::mem::replace(&mut seen[x], true))
    {
        return Err(trace_err(
            ErrorKind::ValueError,
            format!("axes {axes:?} don't match array of shape {:?}", a.shape),
        ));
    }
    let mut dims = [0usize; MAX_RANK];
    for (k, &ax) in axes.iter().enumerate() {
        dims[k] = a.shape.dims()[ax];
    }
    let shape = Shape::new(&dims[..r])?;
    let Some(va) = a.vals() else {
        return Ok(Arr::traced(a.cat, shape));
    };
    let st = a.shape.strides();
    let mut sp = [0usize; MAX_RANK];
    for (k, &ax) in axes.iter().enumerate() {
        sp[k] = st[ax];
    }
    if contiguous(shape, &sp) {
        // Only dims of 1 move (or none): the same values in the same order.
        return Ok(a.with_shape(shape).opaque());
    }
    let mut out = pool_vec(shape.numel());
    strided_copy(va, 0, shape, sp, &mut out);
    Ok(Arr::new(a.cat, shape, out))
}

/// One entry of a basic index on a value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum VIdx {
    /// `:`.
    Full,
    /// `None`.
    NewAxis,
    /// `...`.
    Ellipsis,
    /// An integer (static or dynamic: both normalize negatives and clamp, as jnp does).
    Int(Option<i64>),
    /// A static slice.
    Slice(Option<i64>, Option<i64>),
}

/// Python's `slice(start, stop).indices(n)` for step 1: (start, length).
pub(crate) fn slice_range(start: Option<i64>, stop: Option<i64>, n: usize) -> (usize, usize) {
    let n = n as i64;
    let norm = |v: i64| {
        if v < 0 { (v + n).max(0) } else { v.min(n) }
    };
    let a = start.map_or(0, norm);
    let b = stop.map_or(n, norm);
    (a as usize, (b - a).max(0) as usize)
}

/// Basic indexing of a value: `a[parts]`.
pub(crate) fn index_value(a: &Arr, parts: &[VIdx]) -> SimResult<Arr> {
    let consumed = parts
        .iter()
        .filter(|p| !matches!(p, VIdx::NewAxis | VIdx::Ellipsis))
        .count();
    let r = a.shape.rank();
    if consumed > r {
        return Err(trace_err(
            ErrorKind::IndexError,
            format!(
                "Too many indices: {r}-dimensional array indexed with {consumed} regular indices."
            ),
        ));
    }
    if parts.iter().filter(|p| matches!(p, VIdx::Ellipsis)).count() > 1 {
        return Err(trace_err(
            ErrorKind::IndexError,
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let st = a.shape.strides();
    let mut out_shape = Shape::SCALAR;
    let mut out_strides = [0usize; MAX_RANK];
    let mut offset = 0usize;
    let mut dim = 0usize;
    let mut traced_index = false;
    // `push` first: it refuses a dim past MAX_RANK before the stride is stored.
    let mut push = |shape: &mut Shape, stride: usize, size: usize| -> SimResult<()> {
        shape.push(size)?;
        out_strides[shape.rank() - 1] = stride;
        Ok(())
    };
    for p in parts {
        match *p {
            VIdx::Full => {
                push(&mut out_shape, st[dim], a.shape.dims()[dim])?;
                dim += 1;
            }
            VIdx::NewAxis => push(&mut out_shape, 0, 1)?,
            VIdx::Ellipsis => {
                let n = r - consumed;
                for _ in 0..n {
                    push(&mut out_shape, st[dim], a.shape.dims()[dim])?;
                    dim += 1;
                }
            }
            VIdx::Int(v) => {
                let n = a.shape.dims()[dim] as i64;
                if n == 0 {
                    // jnp's gather refuses an empty axis (static or traced index): there is
                    // no element to clamp to.
                    return Err(trace_err(
                        ErrorKind::IndexError,
                        format!("index is out of bounds for axis {dim} with size 0"),
                    ));
                }
                match v {
                    Some(v) => {
                        let v = if v < 0 { v + n } else { v };
                        let v = v.clamp(0, (n - 1).max(0));
                        offset += v as usize * st[dim];
                    }
                    None => traced_index = true,
                }
                dim += 1;
            }
            VIdx::Slice(s, e) => {
                let (start, len) = slice_range(s, e, a.shape.dims()[dim]);
                offset += start * st[dim];
                push(&mut out_shape, st[dim], len)?;
                dim += 1;
            }
        }
    }
    while dim < r {
        push(&mut out_shape, st[dim], a.shape.dims()[dim])?;
        dim += 1;
    }
    let (Some(va), false) = (a.vals(), traced_index) else {
        return Ok(Arr::traced(a.cat, out_shape));
    };
    let n = out_shape.numel();
    if n == 0 {
        return Ok(Arr::new(a.cat, out_shape, Vec::new()));
    }
    if contiguous(out_shape, &out_strides) {
        // One contiguous run (`x[0:1]`, `x[:, None]`, `x[...]`): the whole array shares
        // its storage (values are immutable), a part is one slice copy.
        if n == va.len() {
            return Ok(a.with_shape(out_shape).opaque());
        }
        return Ok(Arr::copied(a.cat, out_shape, &va[offset..offset + n]));
    }
    let mut out = pool_vec(n);
    strided_copy(va, offset, out_shape, out_strides, &mut out);
    Ok(Arr::new(a.cat, out_shape, out))
}

/// `lax.dynamic_slice_in_dim(a, start, size, axis)`: `size` elements of `axis` from `start`
/// clamped into `[0, dim - size]`, as XLA's dynamic-slice clamps; `start` is `None` while
/// tracing (the result is then traced). A size larger than the dim is a trace-time TypeError,
/// as `lax.dynamic_slice` raises it.
pub(crate) fn dynamic_slice_in_dim(
    a: &Arr,
    start: Option<i64>,
    size: i64,
    axis: usize,
) -> SimResult<Arr> {
    let r = a.shape.rank();
    if axis >= r {
        return Err(trace_err(
            ErrorKind::ValueError,
            format!("axis {axis} is out of bounds for array of dimension {r}"),
        ));
    }
    let n = a.shape.dims()[axis] as i64;
    if size < 0 || size > n {
        return Err(trace_err(
            ErrorKind::TypeError,
            format!(
                "slice_sizes must be less than or equal to operand shape, got slice size {size} for a dim of {n}"
            ),
        ));
    }
    let mut parts = vec![VIdx::Full; r];
    let Some(start) = start else {
        let mut shape = Shape::SCALAR;
        for (d, &s) in a.shape.dims().iter().enumerate() {
            shape.push(if d == axis { size as usize } else { s })?;
        }
        return Ok(Arr::traced(a.cat, shape));
    };
    let s = start.clamp(0, n - size);
    parts[axis] = VIdx::Slice(Some(s), Some(s + size));
    index_value(a, &parts)
}

/// Whether a strided window is one contiguous run (row-major strides, ignoring dims of 1).
pub(crate) fn contiguous(shape: Shape, strides: &[usize; MAX_RANK]) -> bool {
    let mut expect = 1;
    for k in (0..shape.rank()).rev() {
        let d = shape.dims()[k];
        if d != 1 && strides[k] != expect {
            return false;
        }
        expect *= d;
    }
    true
}

/// Calls `f(offset)` for each element of a strided window, row-major.
#[inline]
pub(crate) fn for_each_strided(
    offset: usize,
    shape: Shape,
    strides: [usize; MAX_RANK],
    mut f: impl FnMut(usize),
) {
    let r = shape.rank();
    if r == 0 {
        f(offset);
        return;
    }
    if shape.numel() == 0 {
        return;
    }
    let dims = shape.dims();
    let last = r - 1;
    let n_last = dims[last];
    let s_last = strides[last];
    let outer: usize = dims[..last].iter().product();
    let mut idx = [0usize; MAX_RANK];
    let mut base = offset;
    for _ in 0..outer {
        let mut p = base;
        for _ in 0..n_last {
            f(p);
            p += s_last;
        }
        let mut k = last;
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            base += strides[k];
            if idx[k] < dims[k] {
                break;
            }
            base -= strides[k] * dims[k];
            idx[k] = 0;
        }
    }
}

/// Appends the elements of a strided window of `data` to `out`, row-major (whole rows at
/// a time when the last dim is contiguous).
pub(crate) fn strided_copy(
    data: &[f64],
    offset: usize,
    shape: Shape,
    strides: [usize; MAX_RANK],
    out: &mut Vec<f64>,
) {
    let r = shape.rank();
    if r > 0 && strides[r - 1] == 1 {
        // Contiguous rows.
        let n_last = shape.dims()[r - 1];
        let mut row_shape = shape;
        row_shape = Shape::new(&row_shape.dims()[..r - 1]).unwrap_or(Shape::SCALAR);
        if n_last == 0 {
            return;
        }
        for_each_strided(offset, row_shape, strides, |p| {
            out.extend_from_slice(&data[p..p + n_last]);
        });
        return;
    }
    for_each_strided(offset, shape, strides, |p| out.push(data[p]));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cargo-fuzz `differential` crash a2c88337 (2026-11-30): `grouped[None, ...][..., None][None]`
    /// on a rank-6 block built a rank-9 value, and the stride was stored before the rank check.
    #[test]
    fn indexing_past_max_rank_is_an_error_not_a_panic() {
        let a = Arr::new(Cat::F32, Shape::new(&[1; MAX_RANK]).unwrap(), vec![1.0]);
        let err = index_value(&a, &[VIdx::NewAxis]).unwrap_err();
        assert!(err.message.contains("at most"), "{}", err.message);
        let ok = index_value(&a, &[VIdx::Int(Some(0)), VIdx::NewAxis]).unwrap();
        assert_eq!(ok.shape.rank(), MAX_RANK);
    }

    /// int32 products wrap modulo 2^32 like XLA's, also past 2^53 where an f64 product would
    /// drop the low bits (`i32::MAX * i32::MAX` is 1, not 0), on the specialized loop and in
    /// `apply`.
    #[test]
    fn int32_products_wrap_exactly() {
        let max = f64::from(i32::MAX);
        let a = Arr::new(Cat::I32, Shape::new(&[2]).unwrap(), vec![max, -65537.0]);
        let b = Arr::new(Cat::I32, Shape::new(&[2]).unwrap(), vec![max, 2147483.0]);
        let r = binary(BinOp::Mul, &a, &b).unwrap();
        let want = [1.0, f64::from((-65537i64 * 2147483) as i32)];
        let Data::Vals(got) = &r.data else {
            panic!("concrete operands give concrete values")
        };
        assert_eq!(&got[..], &want[..]);
        assert_eq!(apply(BinOp::Mul, Cat::I32, max, max), 1.0);
        assert_eq!(apply(BinOp::Add, Cat::I32, max, 1.0), f64::from(i32::MIN));
    }

    /// An integer index into a zero-size dim used to panic on a slice past the (empty) data:
    /// `zeros((0, 4))[0]` has shape (4,) but no element to take. jnp raises `IndexError` when
    /// tracing (its gather refuses an empty axis), for a static or a traced index.
    #[test]
    fn integer_index_into_a_zero_size_dim_is_an_index_error_not_a_panic() {
        let cases: &[(&[usize], &[VIdx], usize)] = &[
            (&[0, 4], &[VIdx::Int(Some(0))], 0),
            (&[0, 4], &[VIdx::Int(Some(-1))], 0),
            (&[0, 4], &[VIdx::Int(None)], 0),
            (
                &[0, 4, 3],
                &[VIdx::Int(Some(0)), VIdx::Full, VIdx::Int(Some(1))],
                0,
            ),
            (&[2, 0, 3], &[VIdx::Full, VIdx::Int(Some(0))], 1),
            (
                &[2, 0, 3],
                &[VIdx::Ellipsis, VIdx::Int(Some(2)), VIdx::Full],
                1,
            ),
            (
                &[3, 0],
                &[VIdx::NewAxis, VIdx::Int(Some(1)), VIdx::Int(Some(0))],
                1,
            ),
        ];
        for &(shape, parts, axis) in cases {
            let shape = Shape::new(shape).unwrap();
            for a in [
                Arr::new(Cat::F32, shape, vec![]),
                Arr::traced(Cat::F32, shape),
            ] {
                let err = index_value(&a, parts).unwrap_err();
                assert_eq!(err.kind, ErrorKind::IndexError, "{shape:?}{parts:?}");
                assert_eq!(
                    err.message,
                    format!("index is out of bounds for axis {axis} with size 0")
                );
            }
        }
    }

    /// Empty windows of a value whose start offset lies past its (empty) data: an empty
    /// value of the window's shape (NumPy/jnp), never a slice panic; `strided_copy` of an
    /// empty window copies nothing wherever it starts.
    #[test]
    fn empty_windows_past_the_end_of_the_data_are_empty_values() {
        let s = |a: i64, b: i64| VIdx::Slice(Some(a), Some(b));
        let cases: &[(&[usize], &[VIdx], &[usize])] = &[
            (&[0, 4], &[s(0, 0), s(2, 3)], &[0, 1]),
            (&[0, 4], &[VIdx::Full, VIdx::Int(Some(3))], &[0]),
            (&[0, 4], &[s(0, 0), s(2, 2)], &[0, 0]),
            (&[2, 0, 3], &[s(1, 1), VIdx::Full, s(2, 3)], &[0, 0, 1]),
            (
                &[2, 0, 3],
                &[VIdx::Int(Some(1)), VIdx::Full, VIdx::Int(Some(2))],
                &[0],
            ),
            (&[3, 4], &[s(3, 3), s(3, 4)], &[0, 1]),
            (&[3, 4], &[VIdx::Int(Some(2)), s(4, 4)], &[0]),
            (&[3, 4], &[s(2, 3), s(4, 4), VIdx::NewAxis], &[1, 0, 1]),
        ];
        for &(shape, parts, want) in cases {
            let shape = Shape::new(shape).unwrap();
            let a = Arr::new(
                Cat::F32,
                shape,
                (0..shape.numel()).map(|v| v as f64).collect(),
            );
            let out = index_value(&a, parts).unwrap();
            assert_eq!(out.shape, Shape::new(want).unwrap(), "{shape:?}{parts:?}");
            assert_eq!(out.vals().map(<[f64]>::len), Some(0), "{shape:?}{parts:?}");
        }
        let mut out = Vec::new();
        let mut strides = [0usize; MAX_RANK];
        strides[..2].copy_from_slice(&[4, 1]);
        for dims in [[0, 1], [0, 4], [1, 0], [3, 0]] {
            strides_copy_check(&mut out, Shape::new(&dims).unwrap(), strides);
        }
    }

    fn strides_copy_check(out: &mut Vec<f64>, shape: Shape, strides: [usize; MAX_RANK]) {
        for offset in [0, 2, 7, 100] {
            strided_copy(&[], offset, shape, strides, out);
            assert!(out.is_empty(), "{shape:?} at {offset}");
        }
    }
}
