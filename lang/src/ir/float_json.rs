//! The JSON form of a float literal ([`super::ExprKind::Float`]): a JSON number when finite,
//! else the string `"inf"`, `"-inf"` or `"nan"` (JSON has no non-finite numbers, and
//! serde_json would write them as `null`). Helion kernels spell these `float("-inf")` (the
//! running max of an online softmax, a pad fill); finite literals keep the version-1 form.

use serde::{Deserialize, Deserializer, Serializer};

pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else {
        s.serialize_str(non_finite_name(*v))
    }
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        Number(f64),
        Name(String),
    }
    match Form::deserialize(d)? {
        Form::Number(v) => Ok(v),
        Form::Name(n) => parse_non_finite(&n).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "a float literal is a number or \"inf\", \"-inf\", \"nan\", not {n:?}"
            ))
        }),
    }
}

/// `"inf"`, `"-inf"` or `"nan"` for a non-finite `v` (the strings Python's `float()` reads).
pub fn non_finite_name(v: f64) -> &'static str {
    if v.is_nan() {
        "nan"
    } else if v > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// Python's `float(s)` for the non-finite spellings (`"inf"`, `"-Infinity"`, `"nan"`, any case,
/// surrounding whitespace allowed); `None` for anything else.
pub fn parse_non_finite(s: &str) -> Option<f64> {
    let t = s.trim().to_ascii_lowercase();
    let (sign, body) = match t.as_bytes().first() {
        Some(b'-') => (-1.0, &t[1..]),
        Some(b'+') => (1.0, &t[1..]),
        _ => (1.0, &t[..]),
    };
    match body {
        "inf" | "infinity" => Some(sign * f64::INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ExprKind;

    #[test]
    fn non_finite_literals_round_trip_and_finite_ones_stay_numbers() {
        for v in [f64::INFINITY, f64::NEG_INFINITY, 0.5, -0.0] {
            let j = serde_json::to_string(&ExprKind::Float(v)).unwrap();
            let back: ExprKind = serde_json::from_str(&j).unwrap();
            assert!(
                matches!(back, ExprKind::Float(b) if b.to_bits() == v.to_bits()),
                "{j}"
            );
        }
        assert_eq!(
            serde_json::to_string(&ExprKind::Float(0.5)).unwrap(),
            r#"{"float":0.5}"#
        );
        assert_eq!(
            serde_json::to_string(&ExprKind::Float(f64::NEG_INFINITY)).unwrap(),
            r#"{"float":"-inf"}"#
        );
        let nan: ExprKind = serde_json::from_str(r#"{"float":"nan"}"#).unwrap();
        assert!(matches!(nan, ExprKind::Float(v) if v.is_nan()));
        assert!(serde_json::from_str::<ExprKind>(r#"{"float":"huge"}"#).is_err());
    }

    #[test]
    fn python_spellings() {
        assert_eq!(parse_non_finite("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_non_finite(" +Infinity "), Some(f64::INFINITY));
        assert!(parse_non_finite("NaN").unwrap().is_nan());
        assert_eq!(parse_non_finite("1e400"), None);
        assert_eq!(parse_non_finite("-"), None);
    }
}
