//! Element types as the reference computes with them, rounding, and torch's type promotion.
//!
//! The case dtypes are float32, bfloat16 and int32; torch also produces int64 (an integer
//! `.sum`, and Python ints as "wrapped numbers"), so the reference carries [`Ty::I64`]
//! internally. Values are `f64`, each exactly representable in its type (int64 values are kept
//! within ±2^53, beyond which the reference reports [`EvalErrorKind::Overflow`]).
//!
//! Arithmetic is computed on `f64` and rounded once to the result type: for `+ - * /` this is
//! the correctly rounded float32 result (f64 has more than 2·24+2 bits, so double rounding is
//! innocuous). bfloat16 arithmetic follows torch's CPU kernels: operands are widened to the
//! float32 "opmath" type, the operation is rounded to float32, and the result is rounded to
//! bfloat16 (round to nearest even) — two roundings, as torch does.
//!
//! [`EvalErrorKind::Overflow`]: crate::EvalErrorKind::Overflow

use lang::tensor::DType;

/// The largest magnitude an int64 value may have while staying exact in `f64`.
pub(crate) const I64_EXACT: f64 = 9_007_199_254_740_992.0;

/// An element type of a value during evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// float32.
    F32,
    /// bfloat16.
    Bf16,
    /// int32 (arithmetic wraps as torch's).
    I32,
    /// int64 (integer sums; values kept within ±2^53).
    I64,
    /// bool: a mask (a comparison, `&`/`|` of masks); values 0 and 1. No case dtype is bool,
    /// so a mask lives only on the device: it is cast, selected with, or stored (as 0/1).
    Bool,
}

impl Ty {
    /// The reference type of a case dtype.
    pub fn of(d: DType) -> Ty {
        match d {
            DType::Float32 => Ty::F32,
            DType::Bfloat16 => Ty::Bf16,
            DType::Int32 => Ty::I32,
        }
    }

    /// The case dtype, if this type is one (int64 is not).
    pub fn dtype(self) -> Option<DType> {
        match self {
            Ty::F32 => Some(DType::Float32),
            Ty::Bf16 => Some(DType::Bfloat16),
            Ty::I32 => Some(DType::Int32),
            Ty::I64 | Ty::Bool => None,
        }
    }

    /// Whether the type is a floating-point type.
    pub fn is_float(self) -> bool {
        match self {
            Ty::F32 | Ty::Bf16 => true,
            Ty::I32 | Ty::I64 | Ty::Bool => false,
        }
    }

    /// The torch-style name (`float32`, `bfloat16`, `int32`, `int64`).
    pub fn name(self) -> &'static str {
        match self {
            Ty::F32 => "float32",
            Ty::Bf16 => "bfloat16",
            Ty::I32 => "int32",
            Ty::I64 => "int64",
            Ty::Bool => "bool",
        }
    }
}

/// Rounds to float32 (nearest even).
#[inline(always)]
pub(crate) fn r32(v: f64) -> f64 {
    f64::from(v as f32)
}

/// Rounds a float32 to bfloat16, nearest even (NaN stays NaN, overflow goes to infinity).
#[inline(always)]
pub(crate) fn bf16_of_f32(x: f32) -> f32 {
    if x.is_nan() {
        return f32::NAN;
    }
    let b = x.to_bits();
    let rounded = b.wrapping_add(0x7fff + ((b >> 16) & 1)) & 0xffff_0000;
    f32::from_bits(rounded)
}

/// Rounds to bfloat16 through float32 (torch's two roundings).
#[inline(always)]
pub(crate) fn rbf(v: f64) -> f64 {
    f64::from(bf16_of_f32(v as f32))
}

/// Wraps an integer-valued `f64` to int32 two's complement.
#[inline(always)]
pub(crate) fn wrap32(v: f64) -> f64 {
    f64::from((v as i64) as i32)
}

/// torch's `promoteTypes` on the four types.
pub(crate) fn promote(a: Ty, b: Ty) -> Ty {
    use Ty::*;
    match (a, b) {
        _ if a == b => a,
        (Bool, t) | (t, Bool) => t,
        (F32, _) | (_, F32) => F32,
        (Bf16, _) | (_, Bf16) => Bf16,
        (I32 | I64, I32 | I64) => I64, // I32 with I64
    }
}

/// How an operand takes part in torch's result-type computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operand {
    /// A tensor with at least one dimension.
    Dim(Ty),
    /// A zero-dimensional tensor.
    ZeroDim(Ty),
    /// A Python int (a "wrapped number": int64).
    PyInt,
    /// A Python float (a "wrapped number": the default dtype, float32).
    PyFloat,
}

/// torch's `result_type`: dimensioned tensors outrank zero-dim tensors, which outrank Python
/// scalars, except that a higher category (float over int) always wins.
pub(crate) fn result_type(ops: &[Operand]) -> Ty {
    fn fold(acc: Option<Ty>, t: Ty) -> Option<Ty> {
        Some(acc.map_or(t, |a| promote(a, t)))
    }
    let (mut dim, mut zero, mut wrapped) = (None, None, None);
    for op in ops {
        match *op {
            Operand::Dim(t) => dim = fold(dim, t),
            Operand::ZeroDim(t) => zero = fold(zero, t),
            Operand::PyInt => wrapped = fold(wrapped, Ty::I64),
            Operand::PyFloat => wrapped = fold(wrapped, Ty::F32),
        }
    }
    fn combine(higher: Option<Ty>, lower: Option<Ty>) -> Option<Ty> {
        match (higher, lower) {
            (Some(h), _) if h.is_float() => Some(h),
            (Some(h), Some(l)) if l.is_float() || h == Ty::Bool => Some(promote(h, l)),
            (Some(h), _) => Some(h),
            (None, l) => l,
        }
    }
    combine(dim, combine(zero, wrapped)).unwrap_or(Ty::I64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding_matches_the_half_crate() {
        let samples = [
            0.0f32,
            -0.0,
            1.0,
            1.0 + 2f32.powi(-8),
            1.0 + 3.0 * 2f32.powi(-8),
            3.5,
            -2.75,
            1e-40,
            3.4e38,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let mut x = 0x1234_5678u32;
        let mut all: Vec<f32> = samples.to_vec();
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let f = f32::from_bits(x);
            if !f.is_nan() {
                all.push(f);
            }
        }
        for f in all {
            let want = f32::from(half::bf16::from_f32(f));
            assert_eq!(bf16_of_f32(f).to_bits(), want.to_bits(), "{f:e}");
        }
        assert!(bf16_of_f32(f32::NAN).is_nan());
    }

    #[test]
    fn promotion_follows_torch() {
        use Operand::*;
        assert_eq!(result_type(&[Dim(Ty::I32), Dim(Ty::F32)]), Ty::F32);
        assert_eq!(result_type(&[Dim(Ty::Bf16), Dim(Ty::F32)]), Ty::F32);
        assert_eq!(result_type(&[Dim(Ty::I32), PyFloat]), Ty::F32);
        assert_eq!(result_type(&[Dim(Ty::I32), PyInt]), Ty::I32);
        assert_eq!(result_type(&[Dim(Ty::Bf16), PyFloat]), Ty::Bf16);
        assert_eq!(result_type(&[Dim(Ty::Bf16), ZeroDim(Ty::F32)]), Ty::Bf16);
        assert_eq!(result_type(&[Dim(Ty::I32), ZeroDim(Ty::F32)]), Ty::F32);
        assert_eq!(result_type(&[Dim(Ty::I32), ZeroDim(Ty::I64)]), Ty::I32);
        assert_eq!(result_type(&[Dim(Ty::I32), Dim(Ty::Bf16)]), Ty::Bf16);
        assert_eq!(result_type(&[ZeroDim(Ty::I32), PyInt]), Ty::I32);
        assert_eq!(result_type(&[ZeroDim(Ty::I32), PyFloat]), Ty::F32);
    }
}
