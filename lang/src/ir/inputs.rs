//! Input tensors: their shapes and their exact values.
//!
//! Every engine of a case sees the same bytes: the reference, the in-process executor and the
//! JAX worker all take their inputs from [`Case::input_tensors`]. Random constructors do not
//! use torch's generator (which pallas-diff cannot reproduce bit for bit) but
//! [`SeededStream`], a SplitMix64 stream seeded from `torch.manual_seed(N)` (0 when absent)
//! and the input's position:
//! - `torch.rand`: uniform on [0, 1) with 24 random bits (`k / 2^24`), exact in float32;
//! - `torch.randn`: standard normal by Box–Muller from two 24-bit uniforms drawn from one 64-bit
//!   output, rounded to float32.
//!
//! Values are then rounded to the input's dtype (bfloat16: round to nearest even).
//! `torch.empty` is poison: NaN for floats and `i32::MAX` for int32, what the TPU interpreter
//! puts in uninitialized memory (measurements: "Unwritten VMEM scratch reads as NaN (int32:
//! INT_MAX)"); the reference refuses to read it.

use super::{Case, Ctor, DType, Input, InputOp};
use crate::tensor::Tensor;

/// The most elements an input may have (2^24 = 16M: 64 MiB of f32, ample for a kernel test and
/// small enough that a typo cannot exhaust memory).
pub const MAX_INPUT_ELEMENTS: usize = 1 << 24;

/// A shape or value error in an input's constructor chain.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("input `{input}`: {message}")]
pub struct InputError {
    /// The input's name.
    pub input: String,
    /// What is wrong.
    pub message: String,
}

/// SplitMix64: a tiny, stable, well-distributed generator (Steele, Lea, Flood 2014). Stable
/// across builds and platforms, unlike `rand`'s `StdRng`, whose algorithm may change.
#[derive(Clone, Debug)]
pub struct SeededStream(u64);

impl SeededStream {
    /// A stream for input number `position` under `torch.manual_seed(seed)`.
    pub fn new(seed: u64, position: usize) -> SeededStream {
        let mut s = SeededStream(seed ^ 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(position as u64 + 1));
        s.next_u64();
        s
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform on [0, 1) with 24 bits (exact in float32).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 40) as f64 / (1u64 << 24) as f64
    }

    /// Standard normal, rounded to float32: Box–Muller from two 24-bit uniforms. One cos and one
    /// ln per value cost ~40 ns; inputs of a few thousand elements stay in the tens of µs.
    pub fn normal(&mut self) -> f64 {
        let bits = self.next_u64();
        // Two 24-bit uniforms from one draw: u1 in (0, 1] keeps ln finite.
        let u1 = ((bits >> 40) + 1) as f64 / (1u64 << 24) as f64;
        let u2 = ((bits >> 16) & 0xFF_FFFF) as f64 / (1u64 << 24) as f64;
        let r = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        f64::from(r as f32)
    }
}

/// The length of `torch.arange(start, end, step)`, `ceil((end - start) / step)` as torch
/// computes it for either sign of `step`; 0 where `step` is 0 or does not lead from `start`
/// towards `end` (torch raises there, and wellformed refuses those).
pub fn range_len(start: i64, end: i64, step: i64) -> usize {
    let towards_end = (step > 0 && end > start) || (step < 0 && end < start);
    if !towards_end {
        return 0;
    }
    usize::try_from(end.abs_diff(start).div_ceil(step.unsigned_abs())).unwrap_or(usize::MAX)
}

/// The first `n` values of `torch.arange(start, end, step)`: `start`, `start + step`, ...
/// Saturating, so a range that is not wellformed (bounds past int32) still gets values.
pub fn range_values(start: i64, step: i64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| start.saturating_add((i as i64).saturating_mul(step)) as f64)
        .collect()
}

impl Ctor {
    /// The constructor's own shape (before any chain op).
    pub fn shape(&self) -> Vec<usize> {
        match self {
            Ctor::Randn { shape }
            | Ctor::Rand { shape }
            | Ctor::Ones { shape }
            | Ctor::Zeros { shape }
            | Ctor::Full { shape, .. }
            | Ctor::Tensor { shape, .. }
            | Ctor::Empty { shape }
            | Ctor::Randint { shape, .. } => shape.clone(),
            Ctor::Arange { n } => vec![*n],
            Ctor::Range { start, end, step } => vec![range_len(*start, *end, *step)],
            Ctor::Eye { n, m } => vec![*n, *m],
        }
    }

    /// The dtype torch gives the constructor without `dtype=`; `None` where torch would make an
    /// int64 tensor, which case-script v1 does not have.
    pub fn default_dtype(&self) -> Option<DType> {
        match self {
            Ctor::Randn { .. }
            | Ctor::Rand { .. }
            | Ctor::Ones { .. }
            | Ctor::Zeros { .. }
            | Ctor::Full { .. }
            | Ctor::Eye { .. }
            | Ctor::Empty { .. } => Some(DType::Float32),
            Ctor::Arange { .. } | Ctor::Range { .. } | Ctor::Randint { .. } => None,
            Ctor::Tensor { float_literals, .. } => float_literals.then_some(DType::Float32),
        }
    }
}

impl Input {
    /// The dtype of the constructor's result (before `.to`).
    pub fn ctor_dtype(&self) -> Result<DType, InputError> {
        self.dtype
            .or_else(|| self.ctor.default_dtype())
            .ok_or_else(|| InputError {
                input: self.name.clone(),
                message: "torch would make an int64 tensor, which case scripts do not support; \
                      pass dtype=torch.int32"
                    .into(),
            })
    }

    /// Final dtype and shape after the chain.
    pub fn dtype_and_shape(&self) -> Result<(DType, Vec<usize>), InputError> {
        let mut dtype = self.ctor_dtype()?;
        let mut shape = self.ctor.shape();
        self.check_size(&shape)?;
        for op in &self.chain {
            match op {
                InputOp::Reshape(dims) => shape = self.reshaped(&shape, dims)?,
                InputOp::Expand(dims) => shape = self.expanded(&shape, dims)?,
                InputOp::Contiguous => {}
                InputOp::To(d) => dtype = *d,
            }
            self.check_size(&shape)?;
        }
        Ok((dtype, shape))
    }

    /// Refuses shapes whose element count overflows or exceeds [`MAX_INPUT_ELEMENTS`].
    fn check_size(&self, shape: &[usize]) -> Result<usize, InputError> {
        shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .filter(|&n| n <= MAX_INPUT_ELEMENTS)
            .ok_or_else(|| {
                self.err(format!(
                    "shape {shape:?} has more than {MAX_INPUT_ELEMENTS} elements (a case's inputs must fit in memory many times over)"
                ))
            })
    }

    fn err(&self, message: String) -> InputError {
        InputError {
            input: self.name.clone(),
            message,
        }
    }

    fn reshaped(&self, shape: &[usize], dims: &[i64]) -> Result<Vec<usize>, InputError> {
        let numel = self.check_size(shape)?;
        let bad = || self.err(format!("cannot reshape {shape:?} to {dims:?}"));
        let known = dims
            .iter()
            .filter(|&&d| d != -1)
            .try_fold(1i64, |acc, &d| acc.checked_mul(d))
            .ok_or_else(bad)?;
        let holes = dims.iter().filter(|&&d| d == -1).count();
        if holes > 1 || dims.iter().any(|&d| d < -1) {
            return Err(self.err(format!("invalid reshape {dims:?}")));
        }
        let out: Vec<usize> = dims
            .iter()
            .map(|&d| {
                if d == -1 {
                    numel / (known.max(1) as usize)
                } else {
                    d as usize
                }
            })
            .collect();
        if out.iter().product::<usize>() != numel {
            return Err(self.err(format!("cannot reshape {shape:?} to {dims:?}")));
        }
        Ok(out)
    }

    fn expanded(&self, shape: &[usize], dims: &[i64]) -> Result<Vec<usize>, InputError> {
        if dims.len() < shape.len() {
            return Err(self.err(format!("cannot expand {shape:?} to {dims:?}")));
        }
        let lead = dims.len() - shape.len();
        let mut out = Vec::with_capacity(dims.len());
        for (i, &d) in dims.iter().enumerate() {
            let src = if i >= lead {
                Some(shape[i - lead])
            } else {
                None
            };
            let size = match (d, src) {
                (-1, Some(s)) => s,
                (d, Some(s)) if d >= 0 && (s == d as usize || s == 1) => d as usize,
                (d, None) if d >= 0 => d as usize,
                _ => return Err(self.err(format!("cannot expand {shape:?} to {dims:?}"))),
            };
            out.push(size);
        }
        Ok(out)
    }

    /// The input's exact values. `position` is its index in `Case::inputs` (seeds its stream).
    pub fn tensor(&self, seed: u64, position: usize) -> Result<Tensor, InputError> {
        let ctor_dtype = self.ctor_dtype()?;
        self.dtype_and_shape()?;
        let shape = self.ctor.shape();
        let n = self.check_size(&shape)?;
        let mut stream = SeededStream::new(seed, position);
        // Constants and literal values are rounded to the dtype here, once per value.
        let round = |v: f64| ctor_dtype.round(v);
        let values: Vec<f64> = match &self.ctor {
            Ctor::Randn { .. } => (0..n).map(|_| stream.normal()).collect(),
            Ctor::Rand { .. } => (0..n).map(|_| stream.uniform()).collect(),
            Ctor::Ones { .. } => vec![round(1.0); n],
            Ctor::Zeros { .. } => vec![round(0.0); n],
            Ctor::Full { value, .. } => vec![round(*value); n],
            Ctor::Arange { .. } => (0..n).map(|i| i as f64).collect(),
            Ctor::Range { start, step, .. } => range_values(*start, *step, n),
            Ctor::Eye { m, .. } => (0..n)
                .map(|i| if i / m == i % m { 1.0 } else { 0.0 })
                .collect(),
            Ctor::Randint { low, high, .. } => {
                // `high - low` is at most 2^32 (wellformed: both are int32), so the modulo's
                // bias is below 2^-31.
                let width = high.abs_diff(*low).max(1);
                (0..n)
                    .map(|_| low.wrapping_add((stream.next_u64() % width) as i64) as f64)
                    .collect()
            }
            Ctor::Tensor { values, .. } => values.iter().map(|&v| round(v)).collect(),
            Ctor::Empty { .. } => vec![round(poison(ctor_dtype)); n],
        };
        // Whether every value is already exact in the dtype, so that `Tensor::new`'s rounding
        // would change none (rounding each element was a quarter of the inputs' instructions,
        // callgrind, 2,000 cases): a normal is rounded to float32 when drawn, a uniform has 24
        // bits, an arange index is below 2^24 (`MAX_INPUT_ELEMENTS`).
        let exact = match &self.ctor {
            Ctor::Randn { .. } | Ctor::Rand { .. } => ctor_dtype == DType::Float32,
            Ctor::Arange { .. } => matches!(ctor_dtype, DType::Float32 | DType::Int32),
            // Int32 bounds (wellformed) are exact in int32, not in float32 past 2^24.
            Ctor::Range { .. } | Ctor::Randint { .. } => ctor_dtype == DType::Int32,
            Ctor::Eye { .. }
            | Ctor::Ones { .. }
            | Ctor::Zeros { .. }
            | Ctor::Full { .. }
            | Ctor::Tensor { .. }
            | Ctor::Empty { .. } => true,
        };
        let mut t = if exact {
            Tensor {
                dtype: ctor_dtype,
                shape,
                values,
            }
        } else {
            Tensor::new(ctor_dtype, shape, values)
        };
        for op in &self.chain {
            match op {
                InputOp::Reshape(dims) => t.shape = self.reshaped(&t.shape, dims)?,
                InputOp::Expand(dims) => t = self.expand_values(&t, dims)?,
                InputOp::Contiguous => {}
                // Rounding to the dtype the values already have changes none of them.
                InputOp::To(d) if *d == t.dtype => {}
                InputOp::To(d) => t = Tensor::new(*d, t.shape, t.values),
            }
        }
        Ok(t)
    }

    fn expand_values(&self, t: &Tensor, dims: &[i64]) -> Result<Tensor, InputError> {
        let out_shape = self.expanded(&t.shape, dims)?;
        let lead = out_shape.len() - t.shape.len();
        let n: usize = out_shape.iter().product();
        let mut values = Vec::with_capacity(n);
        // The source's shape and row-major strides at the output's rank (leading dims of 1).
        let in_shape: Vec<usize> = std::iter::repeat_n(1, lead)
            .chain(t.shape.iter().copied())
            .collect();
        let mut strides = vec![0usize; in_shape.len()];
        let mut stride = 1;
        for k in (0..in_shape.len()).rev() {
            strides[k] = stride;
            stride *= in_shape[k];
        }
        if n > 0 && out_shape.is_empty() {
            values.extend_from_slice(&t.values[..1]);
        } else if n > 0 {
            expand_into(&t.values, &in_shape, &strides, &out_shape, 0, &mut values);
        }
        Ok(Tensor {
            dtype: t.dtype,
            shape: out_shape,
            values,
        })
    }
}

/// Appends the row-major values of `src` (shape `in_shape`, `strides`) broadcast to
/// `out_shape`, from dim `k` on: a dim of 1 repeats its one slice, the last dim is a run
/// copied or filled at once (per element, the index arithmetic was most of an input's cost).
fn expand_into(
    src: &[f64],
    in_shape: &[usize],
    strides: &[usize],
    out_shape: &[usize],
    k: usize,
    out: &mut Vec<f64>,
) {
    let last = k + 1 == out_shape.len();
    for i in 0..out_shape[k] {
        let at = if in_shape[k] == 1 { 0 } else { i * strides[k] };
        if last {
            if in_shape[k] == 1 {
                out.extend(std::iter::repeat_n(src[0], out_shape[k]));
            } else {
                out.extend_from_slice(&src[..out_shape[k]]);
            }
            return;
        }
        expand_into(&src[at..], in_shape, strides, out_shape, k + 1, out);
    }
}

/// The poison value of uninitialized memory.
pub fn poison(dtype: DType) -> f64 {
    match dtype {
        DType::Float32 | DType::Bfloat16 => f64::NAN,
        DType::Int32 => f64::from(i32::MAX),
    }
}

impl Case {
    /// The exact values of every input, in `Case::inputs` order.
    pub fn input_tensors(&self) -> Result<Vec<Tensor>, InputError> {
        let seed = self.seed.unwrap_or(0);
        self.inputs
            .iter()
            .enumerate()
            .map(|(i, input)| input.tensor(seed, i))
            .collect()
    }

    /// The input tensors passed to the kernel, in parameter order (int arguments skipped).
    pub fn kernel_tensor_args(&self) -> Result<Vec<Tensor>, InputError> {
        let all = self.input_tensors()?;
        Ok(self
            .kernel_arg_positions()
            .into_iter()
            .map(|p| all[p].clone())
            .collect())
    }

    /// Positions in [`Case::inputs`] (and in [`Case::input_tensors`]) of the tensors passed to
    /// the kernel, in parameter order: [`Case::kernel_tensor_args`] without making the tensors,
    /// for a caller that already has them.
    pub fn kernel_arg_positions(&self) -> Vec<usize> {
        self.call
            .args
            .iter()
            .filter_map(|a| match a {
                super::Arg::Input(name) => self.inputs.iter().position(|i| &i.name == name),
                super::Arg::Int(_) | super::Arg::Float(_) | super::Arg::Bool(_) => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Span;

    fn input(ctor: Ctor, chain: Vec<InputOp>) -> Input {
        Input {
            name: "x".into(),
            ctor,
            dtype: None,
            chain,
            span: Span::default(),
        }
    }

    #[test]
    fn expand_matches_indexing_every_element_through_its_source() {
        // Each output element is the source element at its index, dims of 1 read at 0
        // (torch's `expand`); the run-wise copy must give exactly that.
        let cases: &[(&[usize], &[i64])] = &[
            (&[3, 1, 1], &[3, 2, 4]),
            (&[1, 4], &[2, 3, 4]),
            (&[2, 1, 3], &[2, 5, 3]),
            (&[1], &[4]),
            (&[2, 3], &[2, 3]),
            (&[1, 1], &[0, 3]),
        ];
        for (shape, dims) in cases {
            let n: usize = shape.iter().product();
            let src = Tensor {
                dtype: DType::Float32,
                shape: shape.to_vec(),
                values: (0..n).map(|v| v as f64).collect(),
            };
            let t = input(Ctor::Zeros { shape: vec![1] }, vec![])
                .expand_values(&src, dims)
                .unwrap();
            let out: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
            let lead = out.len() - shape.len();
            let mut expected = Vec::new();
            let total: usize = out.iter().product();
            for flat in 0..total {
                let (mut rem, mut src_at, mut stride) = (flat, 0, 1);
                for k in (0..out.len()).rev() {
                    let i = rem % out[k];
                    rem /= out[k];
                    if k >= lead {
                        let s = shape[k - lead];
                        src_at += if s == 1 { 0 } else { i * stride };
                        stride *= s;
                    }
                }
                expected.push(src.values[src_at]);
            }
            assert_eq!(t.shape, out, "{shape:?} -> {dims:?}");
            assert_eq!(t.values, expected, "{shape:?} -> {dims:?}");
        }
    }

    #[test]
    fn expand_repeats_one_value_per_row() {
        let i = input(
            Ctor::Tensor {
                shape: vec![3],
                values: vec![1.0, 2.0, 4.0],
                float_literals: true,
            },
            vec![
                InputOp::Reshape(vec![3, 1, 1]),
                InputOp::Expand(vec![3, 2, 4]),
                InputOp::Contiguous,
            ],
        );
        let t = i.tensor(0, 0).unwrap();
        assert_eq!(t.shape, vec![3, 2, 4]);
        assert!(t.values[..8].iter().all(|&v| v == 1.0));
        assert!(t.values[16..].iter().all(|&v| v == 4.0));
    }

    #[test]
    fn random_inputs_are_deterministic_and_distinct_per_position() {
        let i = input(Ctor::Randn { shape: vec![64] }, vec![]);
        assert_eq!(i.tensor(3, 0).unwrap(), i.tensor(3, 0).unwrap());
        assert_ne!(i.tensor(3, 0).unwrap(), i.tensor(3, 1).unwrap());
        let u = input(Ctor::Rand { shape: vec![1000] }, vec![])
            .tensor(0, 0)
            .unwrap();
        assert!(u.values.iter().all(|&v| (0.0..1.0).contains(&v)));
        let mean = u.values.iter().sum::<f64>() / 1000.0;
        assert!((mean - 0.5).abs() < 0.05, "mean {mean}");
    }

    #[test]
    fn every_input_value_is_exact_in_its_dtype_bit_for_bit() {
        // `tensor` skips the per-element rounding where the values are exact by construction;
        // rounding them again must change no bit.
        let ctors = [
            Ctor::Randn { shape: vec![4096] },
            Ctor::Rand { shape: vec![4096] },
            Ctor::Ones { shape: vec![3] },
            Ctor::Zeros { shape: vec![3] },
            Ctor::Full {
                shape: vec![3],
                value: 0.1,
            },
            Ctor::Arange { n: 70_000 },
            Ctor::Tensor {
                shape: vec![3],
                values: vec![0.1, -2.75, 1e10],
                float_literals: true,
            },
            Ctor::Empty { shape: vec![3] },
        ];
        let bits = |t: &Tensor| t.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for ctor in ctors {
            for dtype in DType::ALL {
                for to in [None, Some(DType::Float32), Some(DType::Bfloat16)] {
                    let mut i = input(ctor.clone(), to.map(InputOp::To).into_iter().collect());
                    i.dtype = Some(dtype);
                    let t = i.tensor(5, 2).unwrap();
                    let again = Tensor::new(t.dtype, t.shape.clone(), t.values.clone());
                    assert_eq!(bits(&t), bits(&again), "{ctor:?} {dtype} {to:?}");
                }
            }
        }
    }

    #[test]
    fn int_literal_tensor_needs_a_dtype() {
        let i = input(
            Ctor::Tensor {
                shape: vec![1],
                values: vec![1.0],
                float_literals: false,
            },
            vec![],
        );
        assert!(i.tensor(0, 0).is_err());
    }
}
