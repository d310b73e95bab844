//! The reference: what a case's kernel means when run eagerly, as PyTorch would run its body
//! (Helion's ref-eager mode), with no padding, no Refs and no planner. Every finding of the
//! harness is a disagreement with it, so it is exact, and it says "this case is invalid"
//! ([`EvalError`]) rather than guess.
//!
//! This crate owns the evaluation of the whole kernel IR: host tensors and their storages, the
//! device loops, indexing, arithmetic with torch's promotion and rounding, the summation order
//! of `.sum`, stores and atomics, and the output forms the CLI prints.
//!
//! ```
//! let src = r#"
//! import torch
//! import helion
//! import helion.language as hl
//!
//! @helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[]))
//! def k(x: torch.Tensor) -> torch.Tensor:
//!     out = torch.zeros([1, 2, 128], dtype=torch.float32)
//!     for g in hl.grid(1):
//!         acc = hl.zeros([2, 128], dtype=torch.float32)
//!         for t in hl.tile(x.size(0), block_size=4):
//!             acc = acc + x[t, :, :].sum(dim=0)
//!         out[g, :, :] = acc
//!     return out
//!
//! x = torch.ones(6, 2, 128)
//! k(x)
//! "#;
//! let case = lang::frontend::parse_case(src, "k.py").unwrap();
//! let outputs = pallas_diff_oracle::evaluate(&case).unwrap();
//! assert!(outputs.outputs[0].tensor.values.iter().all(|&v| v == 6.0));
//! ```
//!
//! # ndarray's decisions and ours
//!
//! Values are [`ndarray`] arrays: device values own an `ArrayD<f64>` in standard layout, host
//! storages a flat `Array1<f64>` that every alias sees with its own shape through
//! `into_shape_with_order`. What NumPy and torch agree on is ndarray's, tested by its users
//! for years rather than by us: which elements a basic index selects (`SliceInfoElem::{Index,
//! Slice, NewAxis}` applied by `slice_axis_inplace` and `collapse_axis`: ints, slices of any
//! positive step, `None`),
//! broadcasting (`broadcast`), reshapes and views (`into_shape_with_order`), permutes
//! (`permuted_axes`), the gather of an advanced index (`collapse_axis`, `permuted_axes`), the element
//! walks of arithmetic, casts, stores and atomics (`Zip`, `mapv`), and aliasing: a store
//! through a host alias writes through an ndarray view of the storage every other alias sees.
//!
//! What ndarray does not decide is ours, each rule in one module: torch's type promotion and
//! the rounding of every result (float32, bfloat16 through float32, int32 wrapping; `ty`,
//! `dense`), `.sum`'s summation order (`sum`), the index rules that make a case invalid
//! instead of panicking as ndarray would (Python's clipping of slice bounds, range checks and
//! wrapping of ints and index-tensor entries, torch's placement of advanced indices; `index`),
//! the element and iteration budgets and the magnitude watermark (`dense`, `exec`), and the
//! departures of Helion's eager mode from torch ([`Divergence`]).
//!
//! The reference stays independent of `lang`'s arithmetic kit (`lang::ir::arith`, shared by
//! the validator, the planner, the lowering and the executor): a rule written once there and
//! wrong would be wrong in the compiler and in its judge alike, and no finding would show it.
//! It shares with the compiler only what a case *is* (the IR, the input tensors, the
//! effective block sizes: spec §1.1a says both use the same), never how a value is computed.
//!
//! # Semantics (the decisions a finding depends on)
//!
//! * **Block sizes** are the *effective* ones (spec §1.1a: a block below the TPU minimum of the
//!   tensor dim it tiles is raised), never padding: `x[tile, :]` is exactly the live rows, the
//!   last tile of `range(begin, end, block)` is clipped. [`Plan::effective_block_sizes`] and
//!   [`Plan::configured_block_sizes`] report both. A missing or non-positive configured size
//!   is an invalid case even where raising would hide it.
//! * **Tile attributes**: `begin`; `end` clipped at the loop end; `index` the int32 vector of
//!   live indices; `count = cdiv(end - begin, block)` of its loop, with the loop's begin;
//!   `id = begin // block`; `block_size` the effective block. A tile used as an index is the
//!   slice of its live rows; in a shape list (`hl.zeros([tile, 128])`) its live length.
//! * **Indexing** is torch's: negative ints wrap, slices clip at the extent (positive steps
//!   only), `None` inserts an axis, integer tensors (`hl.arange`, `t.index + k`) gather; ints
//!   are applied as selects before advanced indices, which stay in place when adjacent and go
//!   first otherwise. Out-of-range ints or tensor entries are `index-out-of-range`. One
//!   exception, Helion's own rule: a tile into a host dim of size 1 reads row 0 as a dim of 1
//!   that broadcasts, wherever the tile lies (`bias[tile_m, tile_n]` of a `[1, N]` bias;
//!   Helion 1.5.1's eager mode and Pallas backend both read it so, measured), where torch's
//!   slice past row 0 is empty (`index::tile_broadcast`).
//! * **Helion's eager mode** ([`Tiling::HelionEager`], what `helion-eager` is compared with):
//!   the reference follows eager mode where Helion defines it differently on purpose and
//!   documents it (one tile per config-driven `hl.tile`, a fixed `block_size=` as written) and
//!   computes torch's values everywhere else; where eager mode departs from torch by a rule of
//!   its own (it clamps negative integer-tensor indices of reads) the evaluation reports the
//!   departure ([`Outputs::divergences`]) instead of copying it.
//! * **Arithmetic and promotion** are torch's: dimensioned tensors outrank 0-dim tensors,
//!   which outrank Python scalars, unless a higher category (float over int) wins
//!   (`int32 + float32 → float32`, `bf16 + f32 → f32`, `bf16 + 0-dim f32 → bf16`,
//!   `int32 + 2.5 → float32`, `int / int → float32`, `//` floors). float32 results are correctly
//!   rounded; bfloat16 results round through float32 then to nearest even (torch's CPU
//!   kernels), with Python scalars read as float32; int32 wraps; integer `.sum` is exact int64.
//!   `acc += v` on a tensor is in place: the result keeps `acc`'s dtype and shape.
//! * **Summation order** of `.sum(dim)` is NumPy's, bit for bit (checked against NumPy):
//!   pairwise (blocks of 8, split above 128) along the innermost non-trivial dim, sequential
//!   from `0` along any other dim, every addition in float32; bfloat16 sums accumulate in
//!   float32 and round once. Values are summed in logical row-major order, as if contiguous.
//!   Torch agrees for non-innermost reductions of fewer than 16 rows; for innermost reductions
//!   its vectorized cascade may differ in the last float32 bit.
//! * **Memory**: loads are snapshots (Helion's `hl.load`), so a later store to the source does
//!   not change a loaded value (spec §4 D1 is 8.0); stores and atomics (`add`, `and`, `cas`,
//!   `max`, `min`, `or`, `xchg`, `xor`, element by element in row-major order, duplicates
//!   accumulating) mutate host storages in program order and are visible to every later load,
//!   also through `view_as`/`reshape` aliases. Every storage tracks which elements were
//!   written: reading `torch.empty` memory never written (allocations and `torch.empty`
//!   inputs) or returning it is an error, never a guess.
//! * **Refusals instead of guesses**: an in-place `+=` on a tensor another live name aliases
//!   (eager PyTorch would write through, a compiled kernel would not) is `aliased-in-place`;
//!   a subscript of a host tensor in a kernel is a load, a fresh value, as Helion reads it in
//!   both its modes (so `state = x[0]; state += 1.0` leaves `x` as it was); a float-to-int cast of NaN/inf/out-of-range values (undefined in
//!   torch) is `overflow`. `.view` is treated like `.reshape` (torch's stride-compatibility
//!   error for `.view` of a non-contiguous value is not modelled).
//! * **Budgets**: at most [`MAX_ITERATIONS`] loop iterations and [`MAX_WORK`] produced tensor
//!   elements per evaluation, and 2^24 elements per value; beyond them the case is `budget`.
//! * **Names** follow Python function scope: a name bound in one iteration or branch is
//!   visible later; reading one not bound on the path taken is `unbound-name`.

mod dense;
mod divergence;
mod error;
mod exec;
mod index;
mod output;
mod plan;
mod sum;
mod ty;

pub use divergence::Divergence;
pub use error::{EvalError, EvalErrorKind};
pub use exec::{MAX_ITERATIONS, MAX_WORK};
pub use output::{Output, OutputSummary, Outputs, Stats, fnv1a64};
pub use plan::{Plan, Tiling};

use lang::ir::Case;

/// Evaluates `case` eagerly: its returned tensors in return order, or why the case is invalid.
/// Equivalent to `Plan::compile(case)?.run()`; compile a [`Plan`] once to run a case many times.
pub fn evaluate(case: &Case) -> Result<Outputs, EvalError> {
    Plan::compile(case)?.run()
}

/// [`evaluate`] with the case's input tensors already made (`case.input_tensors()`, errors
/// included), so a caller that runs other engines on the same inputs makes them once.
pub fn evaluate_with_inputs(
    case: &Case,
    inputs: &Result<Vec<lang::tensor::Tensor>, lang::ir::inputs::InputError>,
) -> Result<Outputs, EvalError> {
    Plan::compile_with_inputs(case, inputs)?.run()
}

/// [`evaluate_with_inputs`] tiling loops as `tiling` says ([`Tiling::HelionEager`] is what
/// Helion's ref eager mode computes, the reference of engine `helion-eager`).
pub fn evaluate_tiled(
    case: &Case,
    inputs: &Result<Vec<lang::tensor::Tensor>, lang::ir::inputs::InputError>,
    tiling: Tiling,
) -> Result<Outputs, EvalError> {
    Plan::compile_tiled(case, inputs, tiling)?.run()
}
