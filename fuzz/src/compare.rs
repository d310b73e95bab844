//! The one comparison of an engine's outputs with the reference's, and its tolerance policy.
//!
//! Per output ([`Tolerance::for_output`]: the dtype's [`Tolerance::for_dtype`], float32's
//! `atol` scaled as below), element `a` (engine) matches `b` (reference) when
//! `|a - b| <= atol + rtol * |b|` (NumPy's `isclose` / `assert_allclose` convention):
//! - **int32**: exact (`atol = rtol = 0`).
//! - **float32**: `rtol = 1e-5`, `atol = 1e-5 * scale`. The reference sums in a fixed order;
//!   JAX/XLA may reassociate a reduction (vectorized or tree order), which moves an f32 sum of a
//!   few hundred terms by a few ulps: 1e-5 relative leaves two orders of magnitude of headroom
//!   over f32's 2^-23 ≈ 1.2e-7 epsilon, while a wrong row (an input value of magnitude ≳ 1e-3
//!   relative to the total) is still far outside it.
//!
//!   `scale` is the largest finite magnitude of the reference's output *or of any float value
//!   the reference computed on the way* ([`oracle::Outputs::magnitude`]), clamped to [1, 32]
//!   ([`F32_ATOL_SCALE_CAP`]): an element whose terms cancel keeps the rounding error of the
//!   large terms, not of its small result. Found twice by the cargo-fuzz `differential` target:
//!   crash `83cc12a8` (2026-11-30), seven accumulated f32 sums of magnitude ~10 cancelled to
//!   0.00707 at one element, where pallas-sim differed from eager PyTorch by 1.05e-5 and XLA
//!   (pallas-tpu-interpret) by 1.7e-5 (~20 ulps of the terms) while `rtol * |0.00707|` allowed
//!   7e-8; crash `72eb6c57` (2026-12-01), 128-lane sums of magnitude ~128 cancelled to an
//!   output that is 0 everywhere, so the output's own magnitude gave `atol = 1e-5` against an
//!   error of 2^-16 = 1.5e-5 (one ulp at 128). The cap keeps a large value from loosening the
//!   whole output: `atol` stays ≤ 3.2e-4, while a wrong row or a poison read moves an element
//!   by about an input's magnitude (randn: ~1; paired reads: powers of two).
//!
//!   A case with matrix products raises float32's `atol` to the products' rounding budget
//!   ([`oracle::Outputs::dot_atol`]: each product's `k * 2^-24` times its largest sum of term
//!   magnitudes, plus what the factors carry from earlier products), at most
//!   [`F32_DOT_ATOL_CAP`] of the output's largest magnitude: float32 sums of products in any
//!   order err by that much, and values built from several products can cancel far below
//!   them (the generator's `acc += hl.dot(hl.dot(w, w.T), w)` over 7 tiles of
//!   `torch.arange(-896, 896)` rows: tiles' products of ~4e10 cancel to ~1.6e8, an error of
//!   2.5e4, 1 false finding in 20,000 profile cases).
//! - **bfloat16**: `rtol = 1.6e-2`, `atol = 1e-2`, not scaled: torch.testing's bf16 rtol, and
//!   the 1e-2 absolute tolerance upstream's resident-Ref tests use for bf16 outputs (spec §5.1,
//!   test_resident_subview_scalar). bf16 has 8 bits of mantissa (ε = 2^-7 ≈ 7.8e-3); one
//!   rounding difference is within it.
//!
//! Special values: NaN in the engine where the reference has a number is a mismatch (a poison
//! read: padding or uninitialized VMEM reached an output); NaN in both is a match; infinities
//! match only infinities of the same sign. So NaN positions must match exactly: a number where
//! the reference has NaN is a mismatch too (an input NaN that a lowering dropped, e.g. by
//! reading another row). This is also how the extra input sets with NaN and ±inf
//! ([`crate::input_sets`]) are compared; their signed zeros compare equal (`-0 == 0`). Shapes
//! and dtypes must be equal.

use lang::tensor::{DType, Tensor};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The largest factor a float32 output's magnitude scales its `atol` by (module docs).
pub const F32_ATOL_SCALE_CAP: f64 = 32.0;

/// The largest float32 `atol` a matrix product's rounding budget sets, relative to the
/// output's largest finite magnitude (module docs): a wrong row or a dropped term moves an
/// element by far more than a thousandth of the output.
pub const F32_DOT_ATOL_CAP: f64 = 1e-3;

/// What the reference's evaluation tells the tolerance besides its outputs: the largest float
/// magnitude it computed ([`oracle::Outputs::magnitude`]) and the rounding budget of its
/// matrix products ([`oracle::Outputs::dot_atol`]). From an `f64`: a magnitude alone.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RefScale {
    /// [`oracle::Outputs::magnitude`].
    pub magnitude: f64,
    /// [`oracle::Outputs::dot_atol`].
    pub dot_atol: f64,
}

impl RefScale {
    /// The scale of a reference evaluation.
    pub fn of(outputs: &oracle::Outputs) -> RefScale {
        RefScale {
            magnitude: outputs.magnitude,
            dot_atol: outputs.dot_atol,
        }
    }
}

impl From<f64> for RefScale {
    fn from(magnitude: f64) -> RefScale {
        RefScale {
            magnitude,
            dot_atol: 0.0,
        }
    }
}

/// Absolute and relative tolerance of one output.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Tolerance {
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance (times |reference|).
    pub rtol: f64,
}

impl Tolerance {
    /// The policy of the module docs.
    pub fn for_dtype(dtype: DType) -> Tolerance {
        match dtype {
            DType::Int32 => Tolerance {
                atol: 0.0,
                rtol: 0.0,
            },
            DType::Float32 => Tolerance {
                atol: 1e-5,
                rtol: 1e-5,
            },
            DType::Bfloat16 => Tolerance {
                atol: 1e-2,
                rtol: 1.6e-2,
            },
        }
    }

    /// The tolerance of one output: [`Tolerance::for_dtype`], with a float32 `atol` scaled by
    /// the larger of the reference output's largest finite magnitude and the scale's
    /// magnitude (the largest the reference computed, [`oracle::Outputs::magnitude`]),
    /// clamped to [1, [`F32_ATOL_SCALE_CAP`]], and at least the scale's dot budget
    /// ([`oracle::Outputs::dot_atol`]) up to [`F32_DOT_ATOL_CAP`] of the output's largest
    /// finite magnitude (see the module docs).
    pub fn for_output(reference: &Tensor, scale: impl Into<RefScale>) -> Tolerance {
        let RefScale {
            magnitude,
            dot_atol,
        } = scale.into();
        let base = Tolerance::for_dtype(reference.dtype);
        let floor = if magnitude.is_finite() {
            magnitude.max(1.0)
        } else {
            1.0
        };
        let largest = || {
            reference
                .values
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0f64, |m, v| m.max(v.abs()))
        };
        let atol = match reference.dtype {
            DType::Float32 => {
                let scaled = base.atol * floor.max(largest()).min(F32_ATOL_SCALE_CAP);
                if dot_atol.is_finite() && dot_atol > scaled {
                    scaled.max(dot_atol.min(F32_DOT_ATOL_CAP * largest()))
                } else {
                    scaled
                }
            }
            DType::Int32 | DType::Bfloat16 => base.atol,
        };
        Tolerance { atol, ..base }
    }

    /// Whether engine value `a` matches reference value `b`.
    pub fn matches(&self, a: f64, b: f64) -> bool {
        if a.is_nan() || b.is_nan() {
            return a.is_nan() && b.is_nan();
        }
        if a.is_infinite() || b.is_infinite() {
            return a == b;
        }
        (a - b).abs() <= self.atol + self.rtol * b.abs()
    }
}

/// How an engine's outputs differ from the reference's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    /// The engine.
    pub engine: crate::engines::EngineId,
    /// The output (its name in the kernel's `return`), or its position.
    pub output: String,
    /// Reference shape.
    pub shape: Vec<usize>,
    /// What kind of difference.
    pub kind: MismatchKind,
    /// Up to [`FIRST_K`] differing multi-indices with (engine, reference) values.
    pub first: Vec<(Vec<usize>, f64, f64)>,
    /// Number of differing elements.
    pub count: usize,
    /// Largest |a - b| over finite pairs (∞ when a NaN/inf differs).
    pub max_abs_err: f64,
    /// Largest |a - b| / |b| over finite pairs with b ≠ 0.
    pub max_rel_err: f64,
    /// The extra input set the outputs were computed on ([`crate::input_sets`]); `None`: the
    /// case's own inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_set: Option<crate::input_sets::SetLabel>,
}

/// The kind of a mismatch; serialized as its kebab-case name ([`MismatchKind::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MismatchKind {
    /// A different number of outputs.
    OutputCount,
    /// A different shape.
    Shape,
    /// A different dtype.
    #[serde(rename = "dtype")]
    DType,
    /// Values outside tolerance.
    Values,
    /// NaN where the reference has a number.
    Poison,
}

impl MismatchKind {
    /// Every kind.
    pub const ALL: [MismatchKind; 5] = [
        MismatchKind::OutputCount,
        MismatchKind::Shape,
        MismatchKind::DType,
        MismatchKind::Values,
        MismatchKind::Poison,
    ];

    /// The kebab-case name (`values`, `output-count`, ...).
    pub fn name(self) -> &'static str {
        match self {
            MismatchKind::OutputCount => "output-count",
            MismatchKind::Shape => "shape",
            MismatchKind::DType => "dtype",
            MismatchKind::Values => "values",
            MismatchKind::Poison => "poison",
        }
    }

    /// The kind with this kebab-case name.
    pub fn from_name(name: &str) -> Option<MismatchKind> {
        MismatchKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for MismatchKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// How many differing elements a mismatch lists.
pub const FIRST_K: usize = 5;

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} disagrees with the reference on `{}` (shape {:?}): {}, {} element(s) differ, max abs err {:e}, max rel err {:e}",
            self.engine,
            self.output,
            self.shape,
            self.kind,
            self.count,
            self.max_abs_err,
            self.max_rel_err
        )?;
        if let Some(set) = self.input_set {
            write!(f, ", on {set}")?;
        }
        for (idx, a, b) in &self.first {
            write!(f, "; at {idx:?} engine {a} reference {b}")?;
        }
        Ok(())
    }
}

fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (k, &d) in shape.iter().enumerate().rev() {
        if d > 0 {
            idx[k] = flat % d;
            flat /= d;
        }
    }
    idx
}

/// Compares an engine's outputs with the reference's (names label the outputs in reports);
/// `scale` is what the reference's evaluation tells the tolerance ([`RefScale`],
/// [`Tolerance::for_output`]).
pub fn compare(
    engine: crate::engines::EngineId,
    names: &[String],
    got: &[Tensor],
    want: &[Tensor],
    scale: impl Into<RefScale>,
) -> Result<(), Box<Mismatch>> {
    let scale = scale.into();
    let label = |i: usize| {
        names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("output {i}"))
    };
    let base = |output: String, shape: Vec<usize>, kind| Mismatch {
        engine,
        output,
        shape,
        kind,
        first: vec![],
        count: 0,
        max_abs_err: f64::INFINITY,
        max_rel_err: f64::INFINITY,
        input_set: None,
    };
    if got.len() != want.len() {
        return Err(Box::new(base(
            format!("{} vs {} outputs", got.len(), want.len()),
            vec![],
            MismatchKind::OutputCount,
        )));
    }
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        if a.shape != b.shape {
            let mut m = base(label(i), b.shape.clone(), MismatchKind::Shape);
            m.first = vec![(a.shape.clone(), 0.0, 0.0)];
            return Err(Box::new(m));
        }
        if a.dtype != b.dtype {
            return Err(Box::new(base(
                label(i),
                b.shape.clone(),
                MismatchKind::DType,
            )));
        }
        // Equal values always match (NaN is never equal, so it still reaches `matches`). The
        // in-process engines are bit-identical to the reference on almost every element, so
        // the tolerance (a pass over the reference's values) is worked out only when one is not.
        let mut tol = None;
        let mut m = base(label(i), b.shape.clone(), MismatchKind::Values);
        m.max_abs_err = 0.0;
        m.max_rel_err = 0.0;
        for (k, (&x, &y)) in a.values.iter().zip(&b.values).enumerate() {
            if x == y
                || tol
                    .get_or_insert_with(|| Tolerance::for_output(b, scale))
                    .matches(x, y)
            {
                continue;
            }
            m.count += 1;
            if x.is_nan() && !y.is_nan() {
                m.kind = MismatchKind::Poison;
            }
            if m.first.len() < FIRST_K {
                m.first.push((unravel(k, &b.shape), x, y));
            }
            let abs = if x.is_finite() && y.is_finite() {
                (x - y).abs()
            } else {
                f64::INFINITY
            };
            m.max_abs_err = m.max_abs_err.max(abs);
            if y != 0.0 {
                m.max_rel_err = m.max_rel_err.max(abs / y.abs());
            } else if abs > 0.0 {
                m.max_rel_err = f64::INFINITY;
            }
        }
        if m.count > 0 {
            return Err(Box::new(m));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dtype: DType, values: Vec<f64>) -> Tensor {
        Tensor::new(dtype, vec![values.len()], values)
    }

    #[test]
    fn mismatch_kinds_serialize_as_their_names_and_back() {
        for k in MismatchKind::ALL {
            let json = serde_json::to_string(&k).expect("serializes");
            assert_eq!(json, format!("\"{}\"", k.name()));
            let back: MismatchKind = serde_json::from_str(&json).expect("deserializes");
            assert_eq!(back, k);
            assert_eq!(MismatchKind::from_name(k.name()), Some(k));
        }
        assert_eq!(MismatchKind::from_name("d-type"), None);
    }

    #[test]
    fn int32_is_exact() {
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[t(DType::Int32, vec![1.0, 2.0])],
                &[t(DType::Int32, vec![1.0, 2.0])],
                0.0
            )
            .is_ok()
        );
        let m = compare(
            crate::engines::EngineId::PallasSim,
            &["out".into()],
            &[t(DType::Int32, vec![1.0, 3.0])],
            &[t(DType::Int32, vec![1.0, 2.0])],
            0.0,
        )
        .unwrap_err();
        assert_eq!(
            (m.count, m.first[0].0.clone(), m.max_abs_err),
            (1, vec![1], 1.0)
        );
    }

    #[test]
    fn float_tolerances_per_dtype() {
        let f = Tolerance::for_dtype(DType::Float32);
        assert!(f.matches(100.0005, 100.0));
        assert!(!f.matches(100.01, 100.0));
        let b = Tolerance::for_dtype(DType::Bfloat16);
        assert!(b.matches(8.0625, 8.0));
        assert!(
            !b.matches(5.0, 7.0),
            "the D12 wrong value must not pass as bf16 rounding"
        );
    }

    /// cargo-fuzz crash `83cc12a8`: an element that cancels to 0.00707 in an output whose
    /// terms are ~10 carries their rounding error (XLA vs eager PyTorch: 1.7e-5).
    #[test]
    fn float_atol_scales_with_the_outputs_magnitude() {
        let want = t(DType::Float32, vec![10.25, 0.007073402404785156]);
        let xla = t(DType::Float32, vec![10.25, 0.007090568542480469]);
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[xla],
                std::slice::from_ref(&want),
                0.0
            )
            .is_ok()
        );
        let wrong_row = t(DType::Float32, vec![10.25, 0.007073402404785156 + 0.01]);
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[wrong_row],
                &[want],
                0.0
            )
            .is_err()
        );
        // One huge element does not loosen the others past the cap: atol stays 3.2e-4.
        let outlier = t(DType::Float32, vec![1e4, 0.0]);
        let off = t(DType::Float32, vec![1e4, 1e-3]);
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[off],
                std::slice::from_ref(&outlier),
                0.0
            )
            .is_err()
        );
        let rounding = t(DType::Float32, vec![1e4, 3e-4]);
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[rounding],
                &[outlier],
                0.0
            )
            .is_ok()
        );
        // bf16 is not scaled.
        let b = t(DType::Bfloat16, vec![100.0, 0.0]);
        let wrong = t(DType::Bfloat16, vec![100.0, 0.5]);
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[wrong],
                &[b],
                0.0
            )
            .is_err()
        );
        // Below magnitude 1 nothing is scaled.
        let small = t(DType::Float32, vec![0.5, 0.007073402404785156]);
        let off = t(DType::Float32, vec![0.5, 0.007090568542480469]);
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[off],
                &[small],
                0.0
            )
            .is_err()
        );
    }

    /// cargo-fuzz crash `72eb6c57`: terms of magnitude ~128 cancel to an output that is 0
    /// everywhere; the reference's intermediate magnitude, not the output's, bounds the error
    /// (pallas-sim: -2^-16, one ulp at 128).
    #[test]
    fn float_atol_scales_with_what_the_reference_computed_on_the_way() {
        let want = t(DType::Float32, vec![0.0, 0.0]);
        let sim = t(DType::Float32, vec![-1.52587890625e-5, 0.0]);
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                std::slice::from_ref(&sim),
                std::slice::from_ref(&want),
                0.0
            )
            .is_err()
        );
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                std::slice::from_ref(&sim),
                std::slice::from_ref(&want),
                128.0
            )
            .is_ok()
        );
        // Still capped: a wrong value of an input's magnitude is found however large the terms.
        let wrong = t(DType::Float32, vec![1e-3, 0.0]);
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[wrong],
                &[want],
                1e9
            )
            .is_err()
        );
        assert_eq!(
            Tolerance::for_output(&t(DType::Float32, vec![0.0]), f64::NAN).atol,
            1e-5
        );
    }

    #[test]
    fn nan_where_the_reference_has_a_number_is_poison() {
        let m = compare(
            crate::engines::EngineId::PallasSim,
            &[],
            &[t(DType::Float32, vec![f64::NAN])],
            &[t(DType::Float32, vec![1.0])],
            0.0,
        )
        .unwrap_err();
        assert_eq!(m.kind, MismatchKind::Poison);
        assert!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[t(DType::Float32, vec![f64::NAN])],
                &[t(DType::Float32, vec![f64::NAN])],
                0.0
            )
            .is_ok()
        );
    }

    #[test]
    fn shape_and_count_mismatches_are_reported() {
        let a = Tensor::new(DType::Float32, vec![2, 1], vec![0.0, 0.0]);
        let b = Tensor::new(DType::Float32, vec![1, 2], vec![0.0, 0.0]);
        assert_eq!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                std::slice::from_ref(&a),
                &[b],
                0.0
            )
            .unwrap_err()
            .kind,
            MismatchKind::Shape
        );
        assert_eq!(
            compare(
                crate::engines::EngineId::PallasSim,
                &[],
                &[a.clone(), a.clone()],
                &[a],
                0.0
            )
            .unwrap_err()
            .kind,
            MismatchKind::OutputCount
        );
    }

    #[test]
    fn first_indices_are_multi_dimensional() {
        let a = Tensor::new(
            DType::Float32,
            vec![2, 3],
            vec![0.0, 0.0, 0.0, 0.0, 9.0, 0.0],
        );
        let b = Tensor::new(DType::Float32, vec![2, 3], vec![0.0; 6]);
        assert_eq!(
            compare(crate::engines::EngineId::PallasSim, &[], &[a], &[b], 0.0)
                .unwrap_err()
                .first[0]
                .0,
            vec![1, 1]
        );
    }

    /// The false finding of 20,000 profile cases (`--seed 94`): tiles' products of ~4e10
    /// cancel to ~1.6e8 and pallas-sim erred by 2.5e4; the products' budget covers that, up to
    /// a thousandth of the output, and a wrong value is still found.
    #[test]
    fn a_products_rounding_budget_raises_float32_atol_up_to_a_thousandth() {
        let want = t(DType::Float32, vec![-156_614_656.0, 315_531_264.0]);
        let scale = RefScale {
            magnitude: 1.9e11,
            dot_atol: 2.2e6,
        };
        let tol = Tolerance::for_output(&want, scale);
        assert_eq!(tol.atol, 1e-3 * 315_531_264.0);
        assert_eq!(tol.rtol, 1e-5);
        assert!(tol.matches(-156_590_080.0, -156_614_656.0));
        // Without the budget, the error is found.
        assert!(!Tolerance::for_output(&want, 1.9e11).matches(-156_590_080.0, -156_614_656.0));
        // A value off by a thousandth of the output and more is still a mismatch.
        assert!(!tol.matches(-157_000_000.0, -156_614_656.0));
        // bfloat16 and int32 do not take it.
        let b = t(DType::Bfloat16, vec![1.0]);
        assert_eq!(
            Tolerance::for_output(&b, scale),
            Tolerance::for_dtype(DType::Bfloat16)
        );
    }
}
