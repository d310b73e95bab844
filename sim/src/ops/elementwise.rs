//! Elementwise operations: arithmetic as JAX builds it on int32 and floats (`lax.div`/`lax.rem`,
//! `jnp.floor_divide`/`jnp.remainder`), each op rounded to the result dtype, XLA's constant
//! folding of float32 adds, comparisons, NaN-propagating `minimum`/`maximum`, negation, `map`
//! and `jnp.where`.

use super::broadcast::{bcast_strides, broadcast_shapes, broadcast_to, for_each_row2, for_each2};
use super::convert::{cast, convert};
use super::trace_err;
use crate::error::{ErrorKind, SimError, SimResult};
use crate::value::{Arr, Cat, Data, MAX_RANK, pool_vec, round_bf16, wrap_i32};
use lang::pallas::{BinOp, CmpOp};
use lang::tensor::DType;

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
fn binary_cat(op: BinOp, a: Cat, b: Cat) -> SimResult<Cat> {
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
fn map(a: &Arr, cat: Cat, f: impl Fn(f64) -> f64) -> Arr {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Shape;

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
}
