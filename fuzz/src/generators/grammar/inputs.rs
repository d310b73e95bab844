//! The inputs `x` and `y`: their constructors, dtypes and values, chosen so that a read of the
//! wrong row shows in the sum (one power of two per row) and products of two reads stay exact
//! in float32.

use super::{Gen, Plan, when};
use arbitrary::Result;
use lang::ir::{Ctor, DType, Input, InputOp, Span};

/// The values of an `x` that is not one power of two per row. Random values (`torch.randn`, and
/// `torch.rand` half as often) only for float dtypes, and only where no product of two reads is
/// taken; int dtypes take `torch.arange` over every element in their place. Then `arange` over
/// every element, `arange` per row spread over the row, ones, and a constant fill. With
/// [`crate::generators::GenConfig::input_ctors`], also the constructors of Helion's own tests:
/// `torch.arange(start, end, step)` over every element, `torch.randint(-8, 8, size)` (exact in
/// every dtype) and, for a 2-D `x`, `torch.eye(n, m)`. They come last with weights of their
/// own, so with the knob off the draw is the one it was (the weights before them sum alike).
const X_RANDN: u32 = 4;
const X_RAND: u32 = 2;
const X_ARANGE: u32 = 2;
const X_ARANGE_ROWS: u32 = 2;
const X_ONES: u32 = 1;
const X_FULL: u32 = 1;
const X_RANGE: u32 = 2;
const X_EYE: u32 = 1;
const X_RANDINT: u32 = 2;

impl Gen<'_, '_> {
    /// The inputs (`x`, `y` when the case writes, `init` when `acc` starts from it, `idx` when
    /// it gathers) and the
    /// `torch.manual_seed` a random one needs.
    pub(super) fn choose_inputs(&mut self, plan: &Plan) -> Result<(Vec<Input>, Option<u64>)> {
        let mut inputs = vec![self.x_input()?];
        let mut random = matches!(
            inputs[0].ctor,
            Ctor::Randn { .. } | Ctor::Rand { .. } | Ctor::Randint { .. }
        );
        if plan.writes {
            let y = self.y_input()?;
            random |= matches!(y.ctor, Ctor::Randn { .. } | Ctor::Rand { .. });
            inputs.push(y);
        }
        if plan.init_acc {
            let shape = [vec![plan.grid], self.acc_shape.clone()].concat();
            inputs.push(Input {
                name: "init".into(),
                ctor: Ctor::Randn { shape },
                dtype: None,
                chain: vec![],
                span: Span::default(),
            });
            random = true;
        }
        if plan.gathers {
            // Rows of `x`, each in range (a gather of an index outside the table is Helion's
            // one-hot zero row, and torch's error or wrap: an invalid case, not a check).
            let rows = self.x_shape[0];
            inputs.push(Input {
                name: "idx".into(),
                ctor: Ctor::Randint {
                    low: 0,
                    high: rows as i64,
                    shape: vec![rows],
                },
                dtype: Some(DType::Int32),
                chain: vec![],
                span: Span::default(),
            });
            random = true;
        }
        let seed = if random {
            Some(self.u.int_in_range(0..=999u64)?)
        } else {
            None
        };
        Ok((inputs, seed))
    }

    pub(super) fn x_input(&mut self) -> Result<Input> {
        let shape = self.x_shape.clone();
        let dtype = self.dtype;
        let n = shape[0];
        let rank = shape.len() as i64;
        let row_shape: Vec<i64> = std::iter::once(n as i64)
            .chain((1..rank).map(|_| 1))
            .collect();
        let full_shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let spread = vec![
            InputOp::Reshape(row_shape),
            InputOp::Expand(full_shape.clone()),
            InputOp::Contiguous,
        ];
        let input = |ctor: Ctor, dtype: Option<DType>, chain: Vec<InputOp>| Input {
            name: "x".into(),
            ctor,
            dtype,
            chain,
            span: Span::default(),
        };
        let exact = self.exact_products && dtype == DType::Float32;
        if self.pct(self.cfg.power_of_two_rows_percent)? || (exact && self.u.ratio(1, 2)?) {
            // One distinct power of two per row: a wrong row shows in the sum.
            let values: Vec<f64> = (0..n).map(|i| f64::from(1u32 << i)).collect();
            let float_literals = dtype.is_float();
            let ctor = Ctor::Tensor {
                shape: vec![n],
                values,
                float_literals,
            };
            return Ok(match (dtype, self.u.ratio(1, 2)?) {
                (DType::Float32, _) => input(ctor, None, spread),
                (DType::Bfloat16, true) => input(
                    ctor,
                    None,
                    [spread, vec![InputOp::To(DType::Bfloat16)]].concat(),
                ),
                (DType::Bfloat16 | DType::Int32, _) => input(ctor, Some(dtype), spread),
            });
        }
        let numel: usize = shape.iter().product();
        // Random float32 values only where no product of two of them is taken.
        let random = !exact;
        Ok(
            match (
                dtype.is_float(),
                self.weighted(&[
                    when(random, X_RANDN),
                    when(random, X_RAND),
                    X_ARANGE,
                    X_ARANGE_ROWS,
                    X_ONES,
                    X_FULL,
                    when(self.cfg.input_ctors, X_RANGE),
                    when(self.cfg.input_ctors && shape.len() == 2, X_EYE),
                    when(self.cfg.input_ctors, X_RANDINT),
                ])?,
            ) {
                (true, 0) => input(Ctor::Randn { shape }, Some(dtype), vec![]),
                (true, 1) => input(
                    Ctor::Rand { shape },
                    (dtype != DType::Float32).then_some(dtype),
                    vec![],
                ),
                (_, 2) => input(
                    Ctor::Arange { n: numel },
                    Some(dtype),
                    vec![InputOp::Reshape(full_shape)],
                ),
                (_, 3) => input(Ctor::Arange { n }, Some(dtype), spread),
                (_, 4) => input(Ctor::Ones { shape }, Some(dtype), vec![]),
                (false, 0 | 1) => input(
                    Ctor::Arange { n: numel },
                    Some(dtype),
                    vec![InputOp::Reshape(full_shape)],
                ),
                (_, 6) => {
                    let step = self.range(1, 2)? as i64;
                    let start = -(numel as i64) / 2;
                    let end = start + numel as i64 * step;
                    input(
                        Ctor::Range { start, end, step },
                        Some(dtype),
                        vec![InputOp::Reshape(full_shape)],
                    )
                }
                (_, 7) => input(
                    Ctor::Eye {
                        n: shape[0],
                        m: shape[1],
                    },
                    Some(dtype),
                    vec![],
                ),
                (_, 8) => input(
                    Ctor::Randint {
                        low: -8,
                        high: 8,
                        shape,
                    },
                    Some(dtype),
                    vec![],
                ),
                _ => input(Ctor::Full { shape, value: 3.0 }, Some(dtype), vec![]),
            },
        )
    }

    pub(super) fn y_input(&mut self) -> Result<Input> {
        let shape = self.x_shape.clone();
        // `y` lands in `x` (through a write a fault may let reads see): no random values where
        // reads of `x` are multiplied.
        let exact = self.exact_products && self.dtype == DType::Float32;
        let ctor = if self.dtype.is_float() && !exact && self.u.ratio(1, 2)? {
            Ctor::Randn { shape }
        } else if self.u.ratio(1, 2)? {
            Ctor::Zeros { shape }
        } else {
            Ctor::Ones { shape }
        };
        Ok(Input {
            name: "y".into(),
            ctor,
            dtype: Some(self.dtype),
            chain: vec![],
            span: Span::default(),
        })
    }
}
