//! What an evaluation returns, and the two forms the CLI prints it in: a one-line summary per
//! output (`pallas-diff eval CASE.py`) and a JSON document (`--json`).

use lang::tensor::{DType, Tensor};
use serde::Serialize;
use std::fmt;

/// One returned tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The returned expression: its name, or its rendered source when it is not a name.
    pub name: String,
    /// Its exact values.
    pub tensor: Tensor,
}

/// The returned tensors, in return order.
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs {
    /// One entry per returned expression (for a kernel that returns nothing, per tensor
    /// parameter it writes: `lang::ir::Kernel::written_params`).
    pub outputs: Vec<Output>,
    /// The largest finite magnitude of any floating-point value the evaluation computed
    /// (every fresh tensor, intermediates included; 0 when none): an output element whose terms
    /// cancel keeps the rounding error of those terms, so a float32 comparison scales its
    /// absolute tolerance by this as well as by the output's own magnitude
    /// (`fuzz::compare::Tolerance::for_output`).
    pub magnitude: f64,
    /// The absolute float32 rounding budget of the matrix products the evaluation computed (0
    /// when none): an engine that sums each product's terms in float32, in any order, errs by
    /// at most this in an output built from them, so a float32 comparison's absolute tolerance
    /// is at least this, up to a cap relative to the output
    /// (`fuzz::compare::Tolerance::for_output`).
    pub dot_atol: f64,
    /// The departures of Helion's eager mode from torch the evaluation reached, in program
    /// order, each subscript once (only under [`crate::Tiling::HelionEager`]; empty otherwise):
    /// the values are torch's, eager mode's may differ there.
    pub divergences: Vec<crate::Divergence>,
}

/// Summary statistics of one output.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Stats {
    /// float32 / bfloat16: over the non-NaN elements (`None` when there are none).
    Float {
        /// Smallest non-NaN value.
        min: Option<f64>,
        /// Largest non-NaN value.
        max: Option<f64>,
        /// Mean of the non-NaN values.
        mean: Option<f64>,
        /// How many elements are NaN.
        nan_count: usize,
    },
    /// int32: exact.
    Int {
        /// Sum of all elements (exact).
        sum: i128,
        /// Smallest value.
        min: Option<i64>,
        /// Largest value.
        max: Option<i64>,
    },
}

/// A one-line description of an output: enough to compare two runs by eye, with a checksum of
/// the exact bytes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OutputSummary {
    /// Output name.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Shape.
    pub shape: Vec<usize>,
    /// Statistics.
    pub stats: Stats,
    /// FNV-1a (64-bit) over [`Tensor::to_le_bytes`].
    pub checksum: u64,
}

/// FNV-1a, 64-bit.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Output {
    /// The summary of this output.
    pub fn summary(&self) -> OutputSummary {
        let t = &self.tensor;
        let stats = if t.dtype.is_float() {
            let vals: Vec<f64> = t.values.iter().copied().filter(|v| !v.is_nan()).collect();
            let n = vals.len();
            Stats::Float {
                min: vals.iter().copied().reduce(f64::min),
                max: vals.iter().copied().reduce(f64::max),
                mean: (n > 0).then(|| vals.iter().sum::<f64>() / n as f64),
                nan_count: t.len() - n,
            }
        } else {
            Stats::Int {
                sum: t.values.iter().map(|&v| v as i128).sum(),
                min: t.values.iter().map(|&v| v as i64).min(),
                max: t.values.iter().map(|&v| v as i64).max(),
            }
        };
        OutputSummary {
            name: self.name.clone(),
            dtype: t.dtype,
            shape: t.shape.clone(),
            stats,
            checksum: fnv1a64(&t.to_le_bytes()),
        }
    }

    /// `{"name", "dtype", "shape", "data"}` with `data` the flat row-major values: ints as
    /// integers, floats as numbers, NaN as `null`, infinities as the strings `"inf"`/`"-inf"`.
    pub fn to_json(&self) -> serde_json::Value {
        let t = &self.tensor;
        let data: Vec<serde_json::Value> = t
            .values
            .iter()
            .map(|&v| match t.dtype {
                DType::Int32 => serde_json::Value::from(v as i64),
                DType::Float32 | DType::Bfloat16 => {
                    if v.is_nan() {
                        serde_json::Value::Null
                    } else if v.is_infinite() {
                        serde_json::Value::from(if v > 0.0 { "inf" } else { "-inf" })
                    } else {
                        serde_json::Value::from(v)
                    }
                }
            })
            .collect();
        serde_json::json!({
            "name": self.name,
            "dtype": t.dtype.name(),
            "shape": t.shape,
            "data": data,
        })
    }
}

impl Outputs {
    /// One summary per output, in return order.
    pub fn summary(&self) -> Vec<OutputSummary> {
        self.outputs.iter().map(Output::summary).collect()
    }

    /// `{"outputs": [{"name", "dtype", "shape", "data"}, ...]}` (see [`Output::to_json`]).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "outputs": self.outputs.iter().map(Output::to_json).collect::<Vec<_>>() })
    }

    /// The output called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.outputs
            .iter()
            .find(|o| o.name == name)
            .map(|o| &o.tensor)
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v}"))
}

impl fmt::Display for OutputSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}{:?}", self.name, self.dtype, self.shape)?;
        match &self.stats {
            Stats::Float {
                min,
                max,
                mean,
                nan_count,
            } => write!(
                f,
                " min={} max={} mean={} nan={nan_count}",
                num(*min),
                num(*max),
                num(*mean)
            )?,
            Stats::Int { sum, min, max } => write!(
                f,
                " sum={sum} min={} max={}",
                min.map_or("-".into(), |v| v.to_string()),
                max.map_or("-".into(), |v| v.to_string())
            )?,
        }
        write!(f, " fnv1a={:016x}", self.checksum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_and_json() {
        let o = Output {
            name: "out".into(),
            tensor: Tensor::new(
                DType::Float32,
                vec![2, 2],
                vec![1.0, f64::NAN, 3.0, f64::INFINITY],
            ),
        };
        let s = o.summary();
        assert_eq!(
            s.stats,
            Stats::Float {
                min: Some(1.0),
                max: Some(f64::INFINITY),
                mean: Some(f64::INFINITY),
                nan_count: 1
            }
        );
        assert_eq!(s.checksum, fnv1a64(&o.tensor.to_le_bytes()));
        let j = o.to_json();
        assert_eq!(j["data"], serde_json::json!([1.0, null, 3.0, "inf"]));
        assert_eq!(j["shape"], serde_json::json!([2, 2]));
        let i = Output {
            name: "n".into(),
            tensor: Tensor::new(DType::Int32, vec![3], vec![1.0, -2.0, 7.0]),
        };
        assert_eq!(
            i.summary().stats,
            Stats::Int {
                sum: 6,
                min: Some(-2),
                max: Some(7)
            }
        );
        assert!(
            i.summary()
                .to_string()
                .starts_with("n: int32[3] sum=6 min=-2 max=7 fnv1a=")
        );
        assert_eq!(i.to_json()["data"], serde_json::json!([1, -2, 7]));
    }

    #[test]
    fn fnv1a_known_vector() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
