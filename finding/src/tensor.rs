//! A named tensor with its exact JSON form: a reference output as a corpus entry, a report
//! and a standalone `repro.py` hold it.

use lang::tensor::{DType, Tensor};
use serde::{Deserialize, Serialize};

/// One output of the reference.
///
/// In JSON, float values are written with the shortest decimal that reads back as the same
/// float32 (bfloat16 values are float32s), int32 values as integers, NaN and infinities as
/// `"nan"`, `"inf"`, `"-inf"`; reading rounds every value to the dtype, so the stored tensor is
/// bit-exact whatever the JSON parser's last-digit rounding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "RawTensor", from = "RawTensor")]
pub struct NamedTensor {
    /// Its name in the kernel's `return`.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Shape.
    pub shape: Vec<usize>,
    /// Row-major values.
    pub values: Vec<f64>,
}

/// The JSON form of a [`NamedTensor`].
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTensor {
    name: String,
    dtype: DType,
    shape: Vec<usize>,
    #[serde(with = "crate::json::float::vec")]
    values: Vec<f64>,
}

impl From<NamedTensor> for RawTensor {
    fn from(t: NamedTensor) -> RawTensor {
        let short = |v: f64| -> f64 {
            if !v.is_finite() {
                return v;
            }
            match t.dtype {
                // The shortest decimal of the float32, read back as the nearest f64.
                DType::Float32 | DType::Bfloat16 => format!("{}", v as f32).parse().unwrap_or(v),
                DType::Int32 => v,
            }
        };
        RawTensor {
            values: t.values.iter().map(|&v| short(v)).collect(),
            name: t.name,
            dtype: t.dtype,
            shape: t.shape,
        }
    }
}

impl From<RawTensor> for NamedTensor {
    fn from(r: RawTensor) -> NamedTensor {
        NamedTensor {
            values: r.values.iter().map(|&v| r.dtype.round(v)).collect(),
            name: r.name,
            dtype: r.dtype,
            shape: r.shape,
        }
    }
}

impl NamedTensor {
    /// The tensor.
    pub fn tensor(&self) -> Tensor {
        Tensor {
            dtype: self.dtype,
            shape: self.shape.clone(),
            values: self.values.clone(),
        }
    }

    /// Whether `t` holds exactly these values (NaN equals NaN).
    pub fn same_as(&self, t: &Tensor) -> bool {
        self.dtype == t.dtype
            && self.shape == t.shape
            && self.values.len() == t.values.len()
            && self
                .values
                .iter()
                .zip(&t.values)
                .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
    }
}
