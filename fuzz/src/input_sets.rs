//! Extra input sets: more values for a case's input tensors, drawn deterministically from the
//! case's seed, that a Helion engine runs the kernel it compiled once on (Helion's compile is
//! most of a case's cost: more values per compile are more checks per CPU second).
//!
//! Set 0 is the case's own inputs. Extra set `j` (1-based) keeps every input's dtype and shape
//! and takes its flavor from `j` ([`Flavor::of`]), cycling:
//! - **specials** (`j = 1, 4, ...`): the case's own float values with about one element in
//!   [`SPECIAL_ONE_IN`] replaced by a boundary value: ±0, NaN, ±inf and the smallest normal
//!   of the dtype, either sign (no subnormals: XLA flushes them to zero on CPU and TPU, torch
//!   does not, so a subnormal input is a platform divergence, not a lowering bug; see
//!   [`specials`]);
//! - **large** (`j = 2, 5, ...`): float values `±2^e` and `±2^(e+1)` (bfloat16: `±2^e`),
//!   with `e` as large as keeps a sum of every float element of the case below half the
//!   dtype's largest finite value: near the top of the range, yet every sum and difference
//!   of them is exact in float32 (integers below 2^24 times `2^e`), so the order a
//!   reduction adds in cannot change the result and the one comparison stays meaningful;
//! - **redrawn** (`j = 3, 6, ...`): fresh standard-normal float values.
//!
//! Int32 inputs are drawn inside the range of the case's own values (its min, its max, and 0
//! and -1 where they lie inside it), so an index tensor stays an index into the same extent;
//! a redrawn set draws them from the int32 boundaries (0, ±1, `i32::MIN`, `i32::MAX`) instead.
//!
//! The reference is the oracle of every set ([`judge`]): a set on which it says the case is
//! invalid (an index out of range, a float cast to int32 that torch leaves undefined, ...) is
//! dropped and counted, never compared; so is a set whose finite inputs made the reference
//! overflow to a non-finite output (where an overflow happens depends on the order of the
//! operations, which torch does not fix). NaN and ±inf are compared by the one comparison
//! ([`crate::compare`]): a NaN must be where the reference has one, an infinity must be the
//! reference's infinity of the same sign.

use lang::ir::Case;
use lang::ir::inputs::SeededStream;
use lang::tensor::{DType, Tensor};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many extra input sets a Helion engine runs per case unless told otherwise
/// (`--helion-input-sets`). Measured with `pallas-diff bench --helion 40 --seed 1
/// --helion-input-sets K` (2026-12-05, 2 shared cores; 11 of the 40 cases run, the rest
/// Helion refuses): an extra set costs ~1 ms of worker CPU once the launch is jitted (the
/// first jitted run ~90 ms, about one eager run), so K = 8 gave 99 value checks in 13.1 CPU s
/// against 11 in 11.5 CPU s with the own inputs only (+14% CPU per case) and 11 in 13.7 CPU s
/// for the plain Python loop through Helion: 9.45x its value checks per CPU second. More sets
/// add checks nearly for free but each costs the reference a run in this process, and a
/// campaign's cases per second fall by the extra CPU.
pub const DEFAULT_EXTRA_SETS: usize = 8;

/// About one float element in this many is a boundary value in a [`Flavor::Specials`] set.
pub const SPECIAL_ONE_IN: u64 = 16;

static EXTRA_SETS: AtomicUsize = AtomicUsize::new(DEFAULT_EXTRA_SETS);

/// Sets how many extra input sets the Helion engines built from now on run per case (the
/// command line's `--helion-input-sets`, once per process).
pub fn set_extra_sets(n: usize) {
    EXTRA_SETS.store(n, Ordering::Relaxed);
}

/// How many extra input sets a Helion engine runs per case ([`set_extra_sets`]; default
/// [`DEFAULT_EXTRA_SETS`]).
pub fn extra_sets() -> usize {
    EXTRA_SETS.load(Ordering::Relaxed)
}

/// What kind of values an extra set holds (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flavor {
    /// The case's own values with boundary values sprinkled in.
    Specials,
    /// Exact multiples of a power of two near the top of the dtype's range.
    Large,
    /// Fresh normal values; int32 boundaries.
    Redrawn,
}

impl Flavor {
    /// The flavor of extra set `number` (1-based).
    pub fn of(number: usize) -> Flavor {
        match number.saturating_sub(1) % 3 {
            0 => Flavor::Specials,
            1 => Flavor::Large,
            _ => Flavor::Redrawn,
        }
    }

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Specials => "specials",
            Flavor::Large => "large",
            Flavor::Redrawn => "redrawn",
        }
    }
}

/// One extra input set of a case.
#[derive(Clone, Debug, PartialEq)]
pub struct InputSet {
    /// Its number (1-based; 0 is the case's own inputs).
    pub number: usize,
    /// Its flavor.
    pub flavor: Flavor,
    /// A tensor per input of the case, in `Case::inputs` order, shaped and typed as the
    /// case's own.
    pub inputs: Vec<Tensor>,
}

/// The first `extra` extra input sets of `case`, whose own inputs are `own` (in `Case::inputs`
/// order). The same case and own inputs give the same sets, on every machine.
pub fn derive(case: &Case, own: &[Tensor], extra: usize) -> Vec<InputSet> {
    let seed = case.seed.unwrap_or(0);
    let float_elements: usize = own
        .iter()
        .filter(|t| t.dtype.is_float())
        .map(|t| t.values.len())
        .sum();
    (1..=extra)
        .map(|number| {
            let flavor = Flavor::of(number);
            // A stream per (set, input) that no set shares with the case's own inputs.
            let set_seed = seed ^ 0xD1B5_4A32_D192_ED03u64.wrapping_mul(number as u64);
            let inputs = own
                .iter()
                .enumerate()
                .map(|(p, t)| {
                    let mut s = SeededStream::new(set_seed, p);
                    draw(t, flavor, float_elements, &mut s)
                })
                .collect();
            InputSet {
                number,
                flavor,
                inputs,
            }
        })
        .collect()
}

/// One input of a set: `own`'s dtype and shape, values of `flavor`.
fn draw(own: &Tensor, flavor: Flavor, float_elements: usize, s: &mut SeededStream) -> Tensor {
    let values: Vec<f64> = match own.dtype {
        DType::Float32 | DType::Bfloat16 => {
            let dt = own.dtype;
            match flavor {
                Flavor::Specials => {
                    let specials = specials(dt);
                    own.values
                        .iter()
                        .map(|&v| {
                            let r = s.next_u64();
                            if r.is_multiple_of(SPECIAL_ONE_IN) {
                                specials[((r >> 32) % specials.len() as u64) as usize]
                            } else {
                                v
                            }
                        })
                        .collect()
                }
                Flavor::Large => {
                    let e = large_exponent(dt, float_elements);
                    let unit = 2f64.powi(e);
                    let steps: &[f64] = match dt {
                        DType::Bfloat16 => &[-1.0, 1.0],
                        DType::Float32 | DType::Int32 => &[-2.0, -1.0, 1.0, 2.0],
                    };
                    own.values
                        .iter()
                        .map(|_| steps[(s.next_u64() % steps.len() as u64) as usize] * unit)
                        .collect()
                }
                Flavor::Redrawn => own.values.iter().map(|_| dt.round(s.normal())).collect(),
            }
        }
        DType::Int32 => {
            let choices = match flavor {
                Flavor::Specials | Flavor::Large => in_range_boundaries(&own.values),
                Flavor::Redrawn => vec![0.0, 1.0, -1.0, f64::from(i32::MIN), f64::from(i32::MAX)],
            };
            let (lo, hi) = min_max(&own.values);
            own.values
                .iter()
                .map(|_| {
                    let r = s.next_u64();
                    // Half the elements a boundary, half anywhere in the range.
                    if r & 1 == 0 || matches!(flavor, Flavor::Redrawn) || lo == hi {
                        choices[((r >> 1) % choices.len() as u64) as usize]
                    } else {
                        lo + ((r >> 1) % ((hi - lo) as u64 + 1)) as f64
                    }
                })
                .collect()
        }
    };
    Tensor {
        dtype: own.dtype,
        shape: own.shape.clone(),
        values,
    }
}

/// The boundary values a specials set sprinkles in (exact in `dtype`).
///
/// No subnormals: XLA treats them as zero on CPU and TPU (flush-to-zero and
/// denormals-are-zero) where torch keeps them. Measured with the Helion environment's jax 0.10.2
/// and torch 2.15: `jnp.remainder(-2^-149, 3.0)` is `-2^-149` (its sign fix-up compares the
/// subnormal with 0 and sees zero) where `torch.remainder` gives `3.0`, so a `% 3.0` kernel
/// became a false values mismatch of exactly 3.0 on every Helion build; a comparison mask
/// (`x > 0`) differs the same way. The smallest normal stays: every platform keeps it.
fn specials(dtype: DType) -> [f64; 7] {
    let _ = dtype; // float32 and bfloat16 share the smallest normal, 2^-126
    let normal = 2f64.powi(-126);
    [
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        normal,
        -normal,
    ]
}

/// The exponent of a large set's unit: the largest `e` with `2 * 2^(e+1) * (n + 1)` below the
/// dtype's largest finite value (float32 and bfloat16 share its exponent, 2^127 times a
/// mantissa below 2): a sum of all `n` float elements stays below half of it.
fn large_exponent(dtype: DType, n: usize) -> i32 {
    let _ = dtype;
    let bits = usize::BITS as i32 - (n + 1).leading_zeros() as i32; // ceil-ish log2(n + 1)
    127 - 2 - bits
}

fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

/// An int32 input's boundaries inside its own range: min, max, and 0 and -1 where inside.
fn in_range_boundaries(values: &[f64]) -> Vec<f64> {
    let (lo, hi) = min_max(values);
    if values.is_empty() {
        return vec![0.0];
    }
    let mut out = vec![lo, hi];
    for v in [0.0, -1.0] {
        if lo <= v && v <= hi && !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The extra set `label` names of `case`, whose own inputs are `own`: the very set a run
/// derived ([`derive`] is deterministic), or `None` when the label's flavor is not the one its
/// number has (a record of another build's flavor cycle).
pub fn of_label(case: &Case, own: &[Tensor], label: SetLabel) -> Option<InputSet> {
    if label.number == 0 || Flavor::of(label.number) != label.flavor {
        return None;
    }
    derive(case, own, label.number).pop()
}

/// The finite twin of `set`: its values with every NaN and ±inf replaced by 0, when it has
/// any. A Helion lowering that masks by multiplying (`x * mask.astype(dtype)`, as upstream
/// does) turns an input's non-finite element outside a tile's live run into NaN (`inf * 0`),
/// where torch never reads that element: the Helion engines run a set's twin beside it, and a
/// NaN mismatch on the set whose twin agrees is that idiom, counted apart
/// ([`SetsRun::masked_nonfinite`]), not a finding. Any other mismatch is one.
pub fn finite_twin(set: &InputSet) -> Option<InputSet> {
    let nonfinite = |t: &Tensor| t.dtype.is_float() && t.values.iter().any(|v| !v.is_finite());
    if !set.inputs.iter().any(nonfinite) {
        return None;
    }
    let inputs = set
        .inputs
        .iter()
        .map(|t| Tensor {
            dtype: t.dtype,
            shape: t.shape.clone(),
            values: t
                .values
                .iter()
                .map(|&v| if v.is_finite() { v } else { 0.0 })
                .collect(),
        })
        .collect();
    Some(InputSet {
        number: set.number,
        flavor: set.flavor,
        inputs,
    })
}

/// Names one extra set in a mismatch and a report: `input set 2 (large)`; a finding's
/// `meta.json` records it with its mismatch, so a report re-derives the very set ([`of_label`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SetLabel {
    /// The set's number (1-based).
    pub number: usize,
    /// Its flavor.
    pub flavor: Flavor,
}

impl SetLabel {
    /// The label of `set`.
    pub fn of(set: &InputSet) -> SetLabel {
        SetLabel {
            number: set.number,
            flavor: set.flavor,
        }
    }
}

impl std::fmt::Display for SetLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "input set {} ({})", self.number, self.flavor.name())
    }
}

/// What one engine run did with a case's extra input sets.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SetsRun {
    /// Sets derived.
    pub derived: usize,
    /// Sets whose outputs were compared with the reference's.
    pub compared: usize,
    /// Sets the reference called invalid.
    pub dropped_invalid: usize,
    /// Sets whose finite inputs overflowed in the reference.
    pub dropped_overflow: usize,
    /// Sets on which the reference departs from Helion's eager mode.
    pub dropped_diverges: usize,
    /// Sets with NaN or ±inf inputs whose only difference is NaN where the reference has a
    /// value while their finite twin agrees ([`finite_twin`]): Helion's mask by multiplication
    /// reading a non-finite element torch does not read. Counted, not a finding.
    pub masked_nonfinite: usize,
    /// The first set that differs from the reference (its mismatch names the set).
    pub mismatch: Option<crate::compare::Mismatch>,
    /// The inputs (in `Case::inputs` order) of the set that mismatched or raised, for a
    /// reproducer; empty when none did.
    #[serde(skip)]
    pub failed_inputs: Vec<Tensor>,
}

impl SetsRun {
    /// Counts a dropped set.
    pub fn count_dropped(&mut self, why: Dropped) {
        match why {
            Dropped::Invalid => self.dropped_invalid += 1,
            Dropped::Overflow => self.dropped_overflow += 1,
            Dropped::Diverges => self.dropped_diverges += 1,
        }
    }
}

/// Why a set is not compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dropped {
    /// The reference says the case is invalid on these values.
    Invalid,
    /// Finite inputs made the reference's outputs non-finite: where an overflow happens depends
    /// on the order of the operations.
    Overflow,
    /// The reference departs from Helion's eager mode on these values (a known divergence).
    Diverges,
}

/// What the reference says of one set: the outputs to compare with, or why it is dropped.
#[derive(Clone, Debug)]
pub enum Judged {
    /// Compare the engine's outputs with these (and this scale, for the tolerance).
    Compare {
        /// The reference's outputs.
        outputs: Vec<Tensor>,
        /// What the reference's evaluation tells the tolerance.
        scale: crate::compare::RefScale,
    },
    /// Not compared.
    Dropped(Dropped),
}

/// Runs the reference (tiled as `tiling`) on `set` of `case` and judges it.
pub fn judge(case: &Case, set: &InputSet, tiling: oracle::Tiling) -> Judged {
    let run = crate::engines::reference::Reference.run_tiled(case, &Ok(set.inputs.clone()), tiling);
    let Some(outputs) = run.run.status.outputs() else {
        return Judged::Dropped(Dropped::Invalid);
    };
    if !run.divergences.is_empty() {
        return Judged::Dropped(Dropped::Diverges);
    }
    let finite_inputs = set
        .inputs
        .iter()
        .all(|t| t.values.iter().all(|v| v.is_finite()));
    let finite_outputs = outputs
        .iter()
        .all(|t| t.values.iter().all(|v| v.is_finite()));
    if finite_inputs && !finite_outputs {
        return Judged::Dropped(Dropped::Overflow);
    }
    Judged::Compare {
        outputs: outputs.to_vec(),
        scale: run.scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(src: &str) -> Case {
        lang::frontend::parse_case(src, "k.py").expect("case parses")
    }

    const COPY: &str = r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[8]))
def k(x: torch.Tensor, idx: torch.Tensor):
    out = torch.zeros([64], dtype=torch.float32)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] * 2.0 + idx[tile].float()
    return out


torch.manual_seed(3)
x = torch.randn(64)
idx = torch.arange(64, dtype=torch.int32)
k(x, idx)
"#;

    #[test]
    fn sets_are_deterministic_typed_and_shaped_like_the_own_inputs() {
        let c = case(COPY);
        let own = c.input_tensors().unwrap();
        let a = derive(&c, &own, 6);
        // NaN is not equal to itself: compare the bits.
        let bits = |sets: &[InputSet]| {
            sets.iter()
                .flat_map(|s| {
                    s.inputs
                        .iter()
                        .flat_map(|t| t.values.iter().map(|v| v.to_bits()))
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&a), bits(&derive(&c, &own, 6)), "same case, same sets");
        assert_eq!(a.len(), 6);
        for (j, set) in a.iter().enumerate() {
            assert_eq!(set.number, j + 1);
            assert_eq!(set.flavor, Flavor::of(j + 1));
            for (t, o) in set.inputs.iter().zip(&own) {
                assert_eq!((t.dtype, &t.shape), (o.dtype, &o.shape));
                // Every value is exact in its dtype (rounding changes no bit).
                let again = Tensor::new(t.dtype, t.shape.clone(), t.values.clone());
                let bits = |t: &Tensor| t.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(t), bits(&again), "set {}", set.number);
            }
            assert_ne!(
                bits(std::slice::from_ref(set)),
                own.iter()
                    .flat_map(|t| t.values.iter().map(|v| v.to_bits()))
                    .collect::<Vec<_>>(),
                "set {} differs from the own inputs",
                set.number
            );
        }
        // A label re-derives its set (what a finding's report does); a label whose flavor
        // is not its number's names no set.
        let label = SetLabel::of(&a[4]);
        assert_eq!(
            bits(&[of_label(&c, &own, label).expect("set 5")]),
            bits(&a[4..5])
        );
        let wrong = SetLabel {
            number: 5,
            flavor: Flavor::Specials,
        };
        assert_eq!(of_label(&c, &own, wrong), None);
        assert_eq!(
            serde_json::from_str::<SetLabel>(&serde_json::to_string(&label).unwrap()).unwrap(),
            label
        );
        // Another seed, other sets.
        let mut other = c.clone();
        other.seed = Some(4);
        assert_ne!(bits(&derive(&other, &own, 1)), bits(&derive(&c, &own, 1)));
    }

    #[test]
    fn flavors_hold_their_boundary_values() {
        let c = case(
            &COPY
                .replace("torch.randn(64)", "torch.randn(4096)")
                .replace("zeros([64]", "zeros([4096]")
                .replace("arange(64", "arange(4096"),
        );
        let own = c.input_tensors().unwrap();
        let sets = derive(&c, &own, 3);
        let x = |j: usize| &sets[j].inputs[0].values;
        // Specials: NaN, both infinities, a negative zero and the smallest normal among own
        // values; no subnormal (XLA flushes them).
        assert!(x(0).iter().any(|v| v.is_nan()));
        assert!(x(0).contains(&f64::INFINITY) && x(0).contains(&f64::NEG_INFINITY));
        assert!(x(0).iter().any(|v| *v == 0.0 && v.is_sign_negative()));
        assert!(x(0).contains(&2f64.powi(-126)) || x(0).contains(&-(2f64.powi(-126))));
        assert!(
            x(0).iter()
                .all(|v| *v == 0.0 || !v.is_finite() || v.abs() >= 2f64.powi(-126)),
            "no subnormal"
        );
        let kept = x(0)
            .iter()
            .zip(&own[0].values)
            .filter(|(a, b)| a == b)
            .count();
        assert!(kept > 4096 * 8 / 10, "most own values stay ({kept})");
        // Large: near the top of the range, and a sum of all of them stays finite in f32.
        let big = x(1).iter().map(|v| v.abs()).fold(0.0, f64::max);
        assert!(big > 1e30, "{big}");
        let total: f64 = x(1).iter().map(|v| v.abs()).sum();
        assert!((total as f32).is_finite() && total < f64::from(f32::MAX) / 2.0);
        // Int inputs stay inside their own range except in a redrawn set.
        for set in &sets[..2] {
            let ints = &set.inputs[1].values;
            assert!(ints.iter().all(|v| (0.0..=4095.0).contains(v)));
        }
        assert!(sets[2].inputs[1].values.contains(&f64::from(i32::MIN)));
    }

    #[test]
    fn a_finite_twin_zeroes_exactly_the_non_finite_values() {
        let c = case(COPY);
        let own = c.input_tensors().unwrap();
        let sets = derive(&c, &own, 6);
        for set in &sets {
            let has = set.inputs[0].values.iter().any(|v| !v.is_finite());
            let Some(twin) = finite_twin(set) else {
                assert!(!has, "set {}", set.number);
                continue;
            };
            assert!(has);
            for (a, b) in twin.inputs[0].values.iter().zip(&set.inputs[0].values) {
                assert_eq!(*a, if b.is_finite() { *b } else { 0.0 });
            }
            assert_eq!(twin.inputs[1], set.inputs[1], "int inputs are kept");
        }
    }

    #[test]
    fn the_reference_judges_each_set() {
        let c = case(COPY);
        let own = c.input_tensors().unwrap();
        let sets = derive(&c, &own, 3);
        // x * 2 + idx: compared on every set, NaN and inf where the reference has them.
        for set in &sets {
            match judge(&c, set, oracle::Tiling::Effective) {
                Judged::Compare { outputs, .. } => {
                    let (x, idx) = (&set.inputs[0].values, &set.inputs[1].values);
                    let want: Vec<f64> = x
                        .iter()
                        .zip(idx)
                        .map(|(x, i)| f64::from((x * 2.0) as f32) + i)
                        .map(|v| f64::from(v as f32))
                        .collect();
                    let same = outputs[0]
                        .values
                        .iter()
                        .zip(&want)
                        .all(|(a, b)| a == b || (a.is_nan() && b.is_nan()));
                    assert!(same, "set {}", set.number);
                }
                Judged::Dropped(d) => panic!("set {} dropped: {d:?}", set.number),
            }
        }
        // A kernel whose values overflow on the large set: dropped, not compared.
        let square = case(&COPY.replace("x[tile] * 2.0 + idx[tile].float()", "x[tile] * x[tile]"));
        assert!(matches!(
            judge(&square, &sets[1], oracle::Tiling::Effective),
            Judged::Dropped(Dropped::Overflow)
        ));
        // NaN cast to int32 is undefined in torch: the reference refuses, the set is dropped.
        let cast = case(&COPY.replace(
            "x[tile] * 2.0 + idx[tile].float()",
            "(x[tile] * 2.0).to(torch.int32).float()",
        ));
        let with_nan = derive(&cast, &own, 4)
            .into_iter()
            .find(|s| s.inputs[0].values.iter().any(|v| v.is_nan()))
            .expect("a specials set with a NaN");
        assert!(matches!(
            judge(&cast, &with_nan, oracle::Tiling::Effective),
            Judged::Dropped(Dropped::Invalid)
        ));
    }
}
