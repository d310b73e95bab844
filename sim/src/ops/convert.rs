//! Dtype conversion: one value or an array from one category to another (`astype`, implicit
//! promotion), with XLA's saturating float→int conversion.

use crate::value::{Arr, Cat, Data, Shape, round_bf16};
use lang::tensor::DType;

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
