//! Host tensors: the one value type every engine exchanges (inputs and outputs of a case).
//!
//! Values are held as `f64`, each one exactly representable in the tensor's dtype: f32, bf16
//! and int32 all embed exactly in f64, so one representation serves every dtype without
//! losing a bit. [`Tensor::to_le_bytes`] / [`Tensor::from_le_bytes`] give the wire encoding the
//! JAX worker speaks (raw little-endian bytes of the dtype).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Element types of a case (case-script v1: `torch.float32`, `torch.bfloat16`, `torch.int32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// IEEE binary32.
    Float32,
    /// bfloat16: f32's exponent with a 7-bit mantissa; results round to nearest even.
    Bfloat16,
    /// Two's-complement 32-bit integers; arithmetic wraps as torch does.
    Int32,
}

impl DType {
    /// All dtypes, in a fixed order (generators and tables iterate this).
    pub const ALL: [DType; 3] = [DType::Float32, DType::Bfloat16, DType::Int32];

    /// Bits per element (TPU alignment rules depend on it, spec §1.1a).
    pub fn bitwidth(self) -> u32 {
        match self {
            DType::Float32 | DType::Int32 => 32,
            DType::Bfloat16 => 16,
        }
    }

    /// Bytes per element on the wire.
    pub fn size_bytes(self) -> usize {
        self.bitwidth() as usize / 8
    }

    /// Whether the dtype is a floating-point type.
    pub fn is_float(self) -> bool {
        match self {
            DType::Float32 | DType::Bfloat16 => true,
            DType::Int32 => false,
        }
    }

    /// The torch spelling, e.g. `torch.bfloat16`.
    pub fn torch_name(self) -> &'static str {
        match self {
            DType::Float32 => "torch.float32",
            DType::Bfloat16 => "torch.bfloat16",
            DType::Int32 => "torch.int32",
        }
    }

    /// The jax.numpy spelling, e.g. `jnp.bfloat16`.
    pub fn jnp_name(self) -> &'static str {
        match self {
            DType::Float32 => "jnp.float32",
            DType::Bfloat16 => "jnp.bfloat16",
            DType::Int32 => "jnp.int32",
        }
    }

    /// The short name used on the wire and in tables (`float32`, `bfloat16`, `int32`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Float32 => "float32",
            DType::Bfloat16 => "bfloat16",
            DType::Int32 => "int32",
        }
    }

    /// Parses a wire name (`float32`, `bfloat16`, `int32`).
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Rounds `v` to the nearest value of this dtype: round-to-nearest-even for floats,
    /// truncation toward zero then two's-complement wrap for int32 (torch's `.to(torch.int32)`
    /// on in-range values; out-of-range float→int is undefined in torch and is wrapped here).
    pub fn round(self, v: f64) -> f64 {
        match self {
            DType::Float32 => f64::from(v as f32),
            DType::Bfloat16 => {
                // Fast path: a value exact in f32 rounds once, f32 -> bf16 (bit arithmetic);
                // anything else goes straight from f64 so no double rounding can occur.
                let f = v as f32;
                if f64::from(f) == v {
                    // Widened through f32 (a bf16 is an f32's top half, so both steps are
                    // exact, NaN payloads included): half's direct bf16 -> f64 is a branchy
                    // software path, a third of this function's instructions.
                    f64::from(half::bf16::from_f32(f).to_f32())
                } else {
                    f64::from(half::bf16::from_f64(v))
                }
            }
            DType::Int32 => {
                if v.is_nan() {
                    0.0
                } else {
                    f64::from((v.trunc() as i64) as i32)
                }
            }
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dense row-major host tensor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tensor {
    /// Element type; every value in `values` is exactly representable in it.
    pub dtype: DType,
    /// Dimensions, outermost first.
    pub shape: Vec<usize>,
    /// Row-major values.
    pub values: Vec<f64>,
}

/// A byte buffer whose length does not match the dtype and shape it is decoded with.
#[derive(Debug, thiserror::Error)]
#[error("a {dtype} tensor of shape {shape:?} needs {expected} bytes, got {actual}")]
pub struct ByteLengthError {
    /// Declared dtype.
    pub dtype: DType,
    /// Declared shape.
    pub shape: Vec<usize>,
    /// Bytes the dtype and shape need.
    pub expected: usize,
    /// Bytes received.
    pub actual: usize,
}

impl Tensor {
    /// A tensor from values, rounding each to the dtype.
    pub fn new(dtype: DType, shape: Vec<usize>, values: Vec<f64>) -> Tensor {
        debug_assert_eq!(shape.iter().product::<usize>(), values.len());
        let values = values.into_iter().map(|v| dtype.round(v)).collect();
        Tensor {
            dtype,
            shape,
            values,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Raw little-endian bytes of the dtype (the worker protocol's encoding).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() * self.dtype.size_bytes());
        for &v in &self.values {
            match self.dtype {
                DType::Float32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
                DType::Bfloat16 => out.extend_from_slice(&half::bf16::from_f64(v).to_le_bytes()),
                DType::Int32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
            }
        }
        out
    }

    /// Decodes raw little-endian bytes.
    pub fn from_le_bytes(
        dtype: DType,
        shape: Vec<usize>,
        bytes: &[u8],
    ) -> Result<Tensor, ByteLengthError> {
        let n: usize = shape.iter().product();
        let size = dtype.size_bytes();
        if bytes.len() != n * size {
            return Err(ByteLengthError {
                dtype,
                shape,
                expected: n * size,
                actual: bytes.len(),
            });
        }
        let values = bytes
            .chunks_exact(size)
            .map(|c| match dtype {
                DType::Float32 => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                DType::Bfloat16 => f64::from(half::bf16::from_le_bytes([c[0], c[1]])),
                DType::Int32 => f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            })
            .collect();
        Ok(Tensor {
            dtype,
            shape,
            values,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_every_dtype() {
        for dtype in DType::ALL {
            let t = Tensor::new(dtype, vec![2, 3], vec![1.0, -2.5, 3.0, 1e9, -7.0, 0.0]);
            let back = Tensor::from_le_bytes(dtype, vec![2, 3], &t.to_le_bytes()).unwrap();
            assert_eq!(t, back, "{dtype}");
        }
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        // 1 + 2^-8 lies exactly between bf16 neighbours 1 and 1 + 2^-7: ties go to even (1).
        assert_eq!(DType::Bfloat16.round(1.0 + 2f64.powi(-8)), 1.0);
        assert_eq!(
            DType::Bfloat16.round(1.0 + 3.0 * 2f64.powi(-8)),
            1.0 + 2f64.powi(-6)
        );
    }

    #[test]
    fn every_bf16_widens_through_f32_bit_for_bit() {
        for bits in 0..=u16::MAX {
            let b = half::bf16::from_bits(bits);
            assert_eq!(
                f64::from(b.to_f32()).to_bits(),
                f64::from(b).to_bits(),
                "{bits:#06x}"
            );
        }
    }

    #[test]
    fn wrong_byte_length_is_an_error() {
        assert!(Tensor::from_le_bytes(DType::Float32, vec![2], &[0; 7]).is_err());
    }
}
