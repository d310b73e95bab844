//! Known divergences: one row per engine error whose cause is established, with the evidence
//! and where it is tracked. A matching engine error is classified `known-issue` (counted in
//! every campaign table, never hidden, never a finding), so a nightly job fails on what is new,
//! not on the same bug every night. Two kinds of rows: a JAX interpreter gap that is not a bug
//! of the compiler under test, and a real Helion bug already written up with its reduced
//! reproducer in `docs/helion-findings.md` (each row names its section). The goal is to empty
//! this table: `pallas-diff --helion-build SPEC known-issues` re-runs each row's reproducer on
//! a Helion build and lists the stale rows; re-check each row when JAX or Helion is upgraded (`PALLAS_DIFF_JAX_VERSION`,
//! `PALLAS_DIFF_HELION_VERSION`). Errors match here by their status: an exception, or a Helion
//! refusal where its verdict differs from our model's. A wrong value is a finding, with one
//! exception: a value of Helion's eager mode that differs where the reference reports a
//! departure of eager mode from torch ([`oracle::Divergence`], matched by
//! [`KnownIssue::diverges`]); the reference computes torch's value there and never copies
//! eager mode's. And one more: a Helion engine's extra input set (`crate::input_sets`) whose
//! only difference is NaN where its finite twin agrees is Helion's mask by multiplication
//! ([`MASK_BY_MULTIPLICATION`], [`mask_by_multiplication`]): the set is not a mismatch, and a
//! case whose engines otherwise agree is that known issue.

use crate::engines::{EngineId, EngineStatus};
use tpu_runner::Mode;

/// One known divergence.
#[derive(Debug)]
pub struct KnownIssue {
    /// Stable id, e.g. `jax-tpu-interpret-ref-reshape`.
    pub id: &'static str,
    /// The engines it affects.
    pub engines: &'static [EngineId],
    /// What happens and why it is not a compiler bug.
    pub summary: &'static str,
    /// Where it is tracked (upstream issue, or this repository's note).
    pub tracked: &'static str,
    /// Whether an engine status is this divergence.
    pub matches: fn(&EngineStatus) -> bool,
    /// Whether a departure from torch the reference reported explains the engine's values
    /// differing from the reference's ([`known_divergence`]).
    pub diverges: fn(&oracle::Divergence) -> bool,
    /// Whether an emitted module will likely hit it (its text shows the construct): the check
    /// runs such a module alone, not in a batch, because one failing kernel makes the worker
    /// compile every kernel of its batch again (`check::check_prepared`). Only a scheduling
    /// hint: the outcome still comes from running the module.
    pub likely_in: fn(&str) -> bool,
    /// A case script that shows it (`fuzz/known-issues/<id>.py`, the reduced script of its
    /// `docs/helion-findings.md` section): `pallas-diff known-issues` runs it on a Helion build
    /// to tell whether the row still matches or has gone stale. `None`: no reproducer yet, so
    /// the row cannot be re-checked by machine.
    pub reproducer: Option<&'static str>,
}

/// The message and traceback of an engine error, or `None` for any other status.
fn raised(status: &EngineStatus) -> Option<(&str, &str)> {
    match status {
        EngineStatus::KernelError {
            message, traceback, ..
        } => Some((message, traceback)),
        EngineStatus::Outputs(_)
        | EngineStatus::Lowered
        | EngineStatus::Unavailable(_)
        | EngineStatus::NotRun(_)
        | EngineStatus::Refused { .. }
        | EngineStatus::Invalid { .. }
        | EngineStatus::Timeout(_)
        | EngineStatus::Crash(_) => None,
    }
}

fn error_text(status: &EngineStatus) -> Option<String> {
    let EngineStatus::KernelError { kind, .. } = status else {
        return None;
    };
    let (message, traceback) = raised(status)?;
    Some(format!("{kind}\n{message}\n{traceback}"))
}

/// Whether `status` is an exception whose raising frame ([`crate::exception::raising_frame`])
/// is `frame` and whose message contains `message`.
fn raised_in(status: &EngineStatus, frame: &str, message: &str) -> bool {
    raised(status).is_some_and(|(m, traceback)| {
        m.contains(message) && crate::exception::raising_frame(traceback) == frame
    })
}

/// Whether `status` is a refusal of error class `class` whose message contains `message`.
fn refused_with(status: &EngineStatus, class: &str, message: &str) -> bool {
    matches!(status, EngineStatus::Refused { class: c, message: m, .. } if c == class && m.contains(message))
}

/// The integers of the parenthesized tuple after `label` in `message`: `(2, 1, 16)`.
fn tuple_after(message: &str, label: &str) -> Option<Vec<i64>> {
    let (_, rest) = message.split_once(label)?;
    let (dims, _) = rest.strip_prefix('(')?.split_once(')')?;
    dims.split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().ok())
        .collect()
}

/// Whether the `grid=(a, b, ...)` of Pallas's refusal has a zero dim (a negative one is
/// another bug).
fn grid_has_empty_dim(message: &str) -> bool {
    tuple_after(message, "grid=").is_some_and(|dims| dims.contains(&0))
}

/// Whether a JAX slicing message's `operand shape (a, b, ...)` has a zero dim.
fn operand_shape_has_empty_dim(message: &str) -> bool {
    tuple_after(message, "operand shape ").is_some_and(|dims| dims.contains(&0))
}

/// Whether a JAX slicing message says a slice runs past a dim of a non-empty operand: a
/// `slice_sizes` dim larger than the operand's (a block larger than the whole dim, which only a
/// missing pad leaves), or a `limit_indices` dim past it. A slice no larger than the operand
/// is another cause, and an operand with an empty dim is `helion-empty-operand-dma-slice`.
fn slice_past_nonempty_dim(message: &str) -> bool {
    let Some(operand) = tuple_after(message, "operand shape ") else {
        return false;
    };
    let slice = ["got slice_sizes ", "got limit_indices "]
        .iter()
        .find_map(|label| tuple_after(message, label));
    let Some(slice) = slice else { return false };
    message.contains("must be less than or equal to operand shape")
        && slice.len() == operand.len()
        && operand.iter().all(|&d| d > 0)
        && slice.iter().zip(&operand).any(|(s, o)| s > o)
}

/// The engines that run Helion's Pallas backend (its eager mode does not).
const HELION_BACKEND: &[EngineId] = &[
    EngineId::Worker(Mode::HelionPallas),
    EngineId::Worker(Mode::HelionTpuLower),
];

/// The id of the row of Helion's mask by multiplication: matched by no status, but by a
/// Helion engine's extra input sets ([`crate::input_sets::SetsRun::masked_nonfinite`]).
pub const MASK_BY_MULTIPLICATION: &str = "helion-mask-by-multiplication-nan";

/// The table.
pub const KNOWN_ISSUES: &[KnownIssue] = &[
    KnownIssue {
        id: "helion-eager-negative-index-clamped",
        engines: &[EngineId::Worker(Mode::HelionEager)],
        summary: "Helion 1.5.1's eager mode (`HELION_INTERPRET=1`) clamps every integer-tensor \
                  index of a read into its dim before indexing: `torch.clamp(idx, min=0, \
                  max=tensor.size(dim) - 1)` in `RefModeTorchFunctionMode._handle_getitem` \
                  (`helion/runtime/ref_mode.py` line 551), so `x_block[local.index + -1, :]` \
                  reads row 0 where torch reads the last row. The reference reads as torch and \
                  reports the subscript (`oracle::Divergence::NegativeIndexClamped`); a \
                  `helion-eager` value that differs on such a case is this issue.",
        tracked: "helion/runtime/ref_mode.py:551 (1.5.1); not filed upstream yet",
        matches: |_| false,
        diverges: |d| match d {
            oracle::Divergence::NegativeIndexClamped { .. } => true,
        },
        likely_in: |_| false,
        reproducer: None,
    },
    KnownIssue {
        id: "helion-partial-index-list-assertion",
        engines: HELION_BACKEND,
        summary: "Helion 1.5.1 raises `InternalError: AssertionError: invalid subscript` from \
                  `indexing_strategy.py:compute_shape` on an index list shorter than the tensor's \
                  rank in `hl.load`/`hl.store`/`hl.atomic_*` (D-1.5.1-20): an internal assertion, \
                  not a documented refusal. The generator keeps such lists at 1% to test it.",
        tracked: "docs/helion-findings.md#partial-index-lists (not filed upstream yet)",
        matches: |s| {
            raised_in(
                s,
                "helion/_compiler/indexing_strategy.py:compute_shape",
                "invalid subscript",
            )
        },
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-partial-index-list-assertion.py"
        )),
    },
    KnownIssue {
        id: "helion-dma-tail-tile-traced-shape",
        engines: HELION_BACKEND,
        summary: "Helion 1.5.1's launcher passes the traced size of a partial last block to \
                  `pltpu.make_async_copy(...).start()` when a launch-grid tile's BlockSpec block \
                  does not divide the tensor's dim (16 rows, block_size=3; 4 passes), under every \
                  loop type, and the same happens to an `emit_pipeline` inner loop's partial \
                  tile: `TypeError: Shapes must be 1D sequences of concrete values of integer \
                  type`, whatever the rank. The generator keeps such grid blocks at 10%.",
        tracked: "docs/helion-findings.md#dma-of-a-partial-tail-tile (not filed upstream yet)",
        matches: |s| {
            raised_in(
                s,
                "jax/_src/pallas/mosaic/primitives.py:start",
                "sequences of concrete values of integer type",
            )
        },
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-dma-tail-tile-traced-shape.py"
        )),
    },
    KnownIssue {
        id: "helion-empty-launch-grid",
        engines: HELION_BACKEND,
        summary: "A launch-grid loop over an empty dim (`hl.tile(x.size(0))` of a tensor with no \
                  rows) makes Helion 1.5.1's launcher call `pltpu.emit_pipeline` with `grid=(0,)`, \
                  which refuses it under every loop type: `ValueError: All elements in the grid \
                  must be strictly positive`. Torch (and the reference, and Helion's eager mode) \
                  return the empty output; the check is in the TPU pipeline, not interpret \
                  mode's. Our model does not lower such a case either (a gap).",
        tracked: "docs/helion-findings.md#an-empty-launch-grid (not filed upstream yet)",
        matches: |s| {
            raised_in(
                s,
                "jax/_src/pallas/mosaic/pipeline.py:emit_pipeline",
                "All elements in the grid must be strictly positive",
            ) && raised(s).is_some_and(|(m, _)| grid_has_empty_dim(m))
        },
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!("../known-issues/helion-empty-launch-grid.py")),
    },
    KnownIssue {
        id: "helion-empty-operand-dma-slice",
        engines: HELION_BACKEND,
        summary: "A tile loop over a tensor with no rows (`hl.tile(x.size(0))` inside `hl.grid`, \
                  `x` of shape (0, 128)) runs no tile, but the DMA Helion 1.5.1 emits for the loop \
                  body slices a full block of the empty operand when it is traced: `TypeError: \
                  slice slice_sizes must be less than or equal to operand shape, got slice_sizes \
                  (8, 128) for operand shape (0, 128)`, raised through the DMA's `start`. Torch, \
                  the reference and Helion's eager mode return the loop's identity. Matched only \
                  for an operand with an empty dim: the same message over a non-empty operand \
                  is a real out-of-range slice.",
        tracked: "docs/helion-findings.md#an-empty-launch-grid (not filed upstream yet)",
        matches: |s| {
            raised_in(
                s,
                "jax/_src/pallas/mosaic/primitives.py:start",
                "slice_sizes must be less than or equal to operand shape",
            ) && raised(s).is_some_and(|(m, _)| operand_shape_has_empty_dim(m))
        },
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-empty-operand-dma-slice.py"
        )),
    },
    KnownIssue {
        id: "helion-ds-slice-past-unpadded-dim",
        engines: HELION_BACKEND,
        summary: "A `pl.ds(offset, block)` slice of a tensor whose dim the launcher did not pad to \
                  a multiple of the block runs past the dim: `TypeError: slice slice_sizes must \
                  be less than or equal to operand shape` (a block larger than the whole dim) \
                  or `limit_indices ...` through a DMA; with a dim at least the block, JAX \
                  clamps the slice start instead and the values are wrong (a finding). Two \
                  causes in Helion 1.5.1, both read off its generated code: `_record_pad_info` \
                  (`helion/language/memory_ops.py` line 303) keeps one pad entry per (tensor, \
                  dim), the last loop's (\"the last one wins\"), so an earlier loop with a \
                  larger block reads an unpadded dim (a build that keeps the largest block runs \
                  8 of 9 such crashes of a campaign); and an inner tile's `pl.ds` read of a \
                  resident block (`x_block[local.index, ...]`) records no pad for the host \
                  tensor at all (a 1-row tensor read with a block of 2).",
        tracked: "docs/helion-findings.md#a-plds-slice-past-a-dim-the-launcher-did-not-pad \
                  (not filed upstream yet)",
        matches: |s| raised(s).is_some_and(|(m, _)| slice_past_nonempty_dim(m)),
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-ds-slice-past-unpadded-dim.py"
        )),
    },
    KnownIssue {
        id: "helion-branch-carried-unbound-local",
        engines: HELION_BACKEND,
        summary: "A loop-carried value reassigned only under a data-dependent `if` inside an \
                  `hl.tile` loop (`if live >= 1: acc = acc`) makes the kernel Helion 1.5.1 \
                  generates read it before assignment: `UnboundLocalError`, raised through \
                  `runtime/pallas/launcher.py:reordered_kernel` (in 1.4.0, before the launcher \
                  moved there, `runtime/__init__.py:reordered_kernel`: the same bug, measured \
                  with `known-issues --helion-build 1.4.0`). Without the `if` it runs.",
        tracked: "docs/helion-findings.md#a-value-carried-through-a-branch (not filed upstream yet)",
        matches: |s| {
            [
                "helion/runtime/pallas/launcher.py:reordered_kernel",
                "helion/runtime/__init__.py:reordered_kernel",
            ]
            .iter()
            .any(|frame| raised_in(s, frame, "cannot access local variable"))
        },
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-branch-carried-unbound-local.py"
        )),
    },
    KnownIssue {
        id: "helion-refusal-masked-by-default-config",
        engines: HELION_BACKEND,
        summary: "When Helion 1.5.1 refuses a kernel while compiling its host function (a \
                  tracing or planner refusal), `BoundKernel.__init__` computes the default config \
                  for its repro log before re-raising, and that raises instead when a config-driven \
                  `hl.tile(outer.end - outer.begin)` is bounded by a fixed non-power-of-two \
                  `block_size=` (the default block is the fixed size): `InvalidConfig: \
                  config[block_sizes][0] must be a power of two, got 3` replaces the real \
                  refusal, whatever the user's config. Matched only where the verdicts differ: \
                  a genuine power-of-two refusal (D-1.5.1-09) is one our model makes too.",
        tracked: "docs/helion-findings.md#a-refusal-masked-by-the-default-config (not filed upstream yet)",
        matches: |s| refused_with(s, "InvalidConfig", "must be a power of two, got"),
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-refusal-masked-by-default-config.py"
        )),
    },
    KnownIssue {
        id: "helion-one-tile-pipeline-atomic-ref",
        engines: HELION_BACKEND,
        summary: "An `hl.atomic_add` inside an `emit_pipeline` tile loop of one tile (block = \
                  extent) that also carries a value (`acc = acc`) makes the `_pipeline_body` \
                  Helion 1.5.1 generates add to a Ref: `ValueError: Attempting to pass a Ref ... \
                  to a primitive: add -- did you forget to unpack ([...]) the ref?`. With two \
                  tiles, `fori_loop`, or no carried value it runs.",
        tracked: "docs/helion-findings.md#an-atomic-in-a-one-tile-emit_pipeline-beside-a-carried-value \
                  (not filed upstream yet)",
        matches: |s| {
            raised_in(
                s,
                "jax/_src/numpy/ufunc_api.py:__call__",
                "did you forget to unpack",
            ) && raised(s).is_some_and(|(_, tb)| tb.contains("jax/_src/pallas/mosaic/pipeline.py"))
        },
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-one-tile-pipeline-atomic-ref.py"
        )),
    },
    KnownIssue {
        id: "helion-pipeline-inval-discharged",
        engines: HELION_BACKEND,
        summary: "Under `pallas_loop_type=\"emit_pipeline\"`, an inner `hl.tile(..., \
                  block_size=1)` loop that reads two blocks of its outer tile loop of different \
                  ranks by `step.begin` (`k[request, chunk, :, :]` and `g[request, chunk, :]`) \
                  makes JAX's pipeline discharge a block Ref that Helion 1.5.1's \
                  `_pipeline_body` did not ask it to: `ValueError: Did not ask for inval to be \
                  discharged but it was`, raised in `jax/_src/pallas/mosaic/pipeline.py`. Two \
                  blocks of one rank, one block, or `fori_loop` run and agree with torch. The \
                  generator's recurrent production shape hits it (5 of 15 helion-pallas crash \
                  findings of a 3,701-case campaign, `--seed 2041`).",
        tracked: "docs/helion-findings.md#emit_pipeline-around-a-live-extent-loop-did-not-ask-for-inval-to-be-discharged \
                  (not filed upstream yet)",
        matches: |s| {
            raised_in(
                s,
                "jax/_src/pallas/mosaic/pipeline.py:_",
                "Did not ask for inval to be discharged",
            )
        },
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-pipeline-inval-discharged.py"
        )),
    },
    KnownIssue {
        id: "helion-eager-dot-out-dtype-cpu",
        engines: &[EngineId::Worker(Mode::HelionEager)],
        summary: "Helion 1.5.1's eager mode (`HELION_INTERPRET=1`) runs `hl.dot` (and \
                  `torch.matmul`/`addmm`/`bmm`, which it reads as `hl.dot`) as `torch.mm(a, b, \
                  out_dtype=...)` or `torch.bmm(..., out_dtype=...)` \
                  (`helion/language/matmul_ops.py` line 998; `torch.addmm` of bfloat16 \
                  factors into a float32 accumulator through `_handle_mm_with_bias`, \
                  `helion/runtime/ref_mode.py` line 346), whose `out_dtype` overloads \
                  (`aten::mm.dtype`, `aten::bmm.dtype`) torch 2.15 has for CUDA only: \
                  `NotImplementedError: Could not run 'aten::mm.dtype' with arguments from the \
                  'CPU' backend`. An environment limit of eager mode on a CPU, not a lowering \
                  bug; helion-pallas runs the same kernels.",
        tracked: "docs/helion-findings.md#hldot-in-eager-mode-on-a-cpu (not filed upstream yet)",
        matches: |s| {
            raised(s).is_some_and(|(m, tb)| {
                m.contains("Could not run 'aten::")
                    && m.contains(".dtype' with arguments from the 'CPU' backend")
                    && (tb.contains("helion/language/matmul_ops.py")
                        || tb.contains("helion/runtime/ref_mode.py"))
            })
        },
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-eager-dot-out-dtype-cpu.py"
        )),
    },
    KnownIssue {
        id: MASK_BY_MULTIPLICATION,
        engines: &[EngineId::Worker(Mode::HelionPallas)],
        summary: "Helion 1.5.1 masks a partial tile's load by multiplying it by the mask \
                  (`x[pl.ds(...), :] * mask_1.astype(jnp.float32)[:, None]`: \
                  `helion/_compiler/pallas/codegen.py` line 118, with the mask of \
                  `_load_mask_expr` line 348; a masked resident selector does the same, \
                  `view_ops.py` line 1455), so a NaN or ±inf in an element torch never reads \
                  (a row past the tile loop's end, inside the tensor) becomes NaN (`inf * 0`) \
                  and flows into a sum over the tile. Seen only on extra input sets with \
                  non-finite values, whose finite twin agrees (corpus entries 0065 and 0067 of \
                  `replay --engines helion-pallas`, 2026-12-05): counted as this issue, not a \
                  finding. `jnp.where` would \
                  keep the masked elements out.",
        tracked: "helion/_compiler/pallas/codegen.py:118 (1.5.1); not filed upstream yet",
        matches: |_| false,
        diverges: |_| false,
        likely_in: |_| false,
        reproducer: Some(include_str!(
            "../known-issues/helion-mask-by-multiplication-nan.py"
        )),
    },
    KnownIssue {
        id: "jax-tpu-interpret-ref-reshape",
        engines: &[EngineId::Worker(Mode::PallasTpuInterpret)],
        summary: "JAX 0.10.2's TPU interpreter cannot read through a Ref reshape transform \
              (`x_block.reshape((...))`, spec §3.3): `AttributeError: 'ReshapeTransform' object \
              has no attribute 'indices'`. The same module runs in the generic interpreter and \
              lowers with Mosaic (pallas-tpu-lower), so it is an interpreter gap, not a \
              lowering bug. Measured 2026-11-30 on every spec kernel with a resident view.",
        tracked: "pallas-diff notes (issue 5); to report to jax-ml/jax with a repro.py",
        matches: |s| {
            error_text(s).is_some_and(|t| t.contains("'ReshapeTransform' object has no attribute"))
        },
        diverges: |_| false,
        // A Ref reshape prints as `ref.reshape((...))`, a value reshape as `jnp.reshape(x, ...)`.
        // Measured 2026-12-01 on the first 64 kernels `bench --jax` takes from seed 0: 9 failed
        // with this issue, and exactly those 9 hold a Ref reshape by this test.
        likely_in: |source| {
            source.matches(".reshape((").count() > source.matches("jnp.reshape((").count()
        },
        reproducer: None,
    },
];

/// Whether `source` likely hits a known issue of `engine` ([`KnownIssue::likely_in`]).
pub fn likely_known_issue(engine: EngineId, source: &str) -> bool {
    KNOWN_ISSUES
        .iter()
        .any(|k| k.engines.contains(&engine) && (k.likely_in)(source))
}

/// The known issue that explains `engine`'s values differing from its reference's, given the
/// departures from torch that reference reported, if any.
pub fn known_divergence(
    engine: EngineId,
    divergences: &[oracle::Divergence],
) -> Option<&'static KnownIssue> {
    KNOWN_ISSUES
        .iter()
        .find(|k| k.engines.contains(&engine) && divergences.iter().any(|d| (k.diverges)(d)))
}

/// The row of Helion's mask by multiplication, when `engine` is one it affects: an engine
/// run whose extra input sets differed only by NaN from it
/// ([`crate::input_sets::SetsRun::masked_nonfinite`]) is that known issue.
pub fn mask_by_multiplication(engine: EngineId) -> Option<&'static KnownIssue> {
    KNOWN_ISSUES
        .iter()
        .find(|k| k.id == MASK_BY_MULTIPLICATION && k.engines.contains(&engine))
}

/// The known issue an engine's status matches, if any.
pub fn known_issue(engine: EngineId, status: &EngineStatus) -> Option<&'static KnownIssue> {
    KNOWN_ISSUES
        .iter()
        .find(|k| k.engines.contains(&engine) && (k.matches)(status))
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_reproducer_is_a_case_script_of_its_rows_engines() {
        for k in KNOWN_ISSUES {
            let Some(text) = k.reproducer else { continue };
            let case = lang::frontend::load_case_text(text, &format!("{}.py", k.id))
                .unwrap_or_else(|e| panic!("{}: {e}", k.id));
            assert!(!case.inputs.is_empty(), "{}: no inputs", k.id);
            assert!(k.engines.iter().all(|e| e.is_helion()), "{}", k.id);
        }
        // Every Helion row but eager mode's value divergence has one.
        let without: Vec<&str> = KNOWN_ISSUES
            .iter()
            .filter(|k| k.reproducer.is_none() && k.engines.iter().any(|e| e.is_helion()))
            .map(|k| k.id)
            .collect();
        assert_eq!(without, ["helion-eager-negative-index-clamped"]);
    }

    use super::*;

    fn id(name: &str) -> EngineId {
        name.parse().expect("an engine name")
    }

    /// The id of the row `engine`'s `status` matches, if any.
    fn row(engine: &str, status: &EngineStatus) -> Option<&'static str> {
        known_issue(id(engine), status).map(|k| k.id)
    }

    fn raised(message: &str, file: &str, function: &str) -> EngineStatus {
        EngineStatus::KernelError {
            stage: tpu_runner::Stage::Run,
            kind: "TypeError".into(),
            message: message.into(),
            traceback: format!(
                "Traceback (most recent call last):\n  File \"/v/lib/python3.11/site-packages/{file}\", line 1, in {function}\n    x\nTypeError: {message}"
            ),
        }
    }

    #[test]
    fn an_empty_grid_or_operand_is_a_known_issue_and_a_real_out_of_range_slice_is_not() {
        let grid = raised(
            "All elements in the grid must be strictly positive, but got grid=(0,)",
            "jax/_src/pallas/mosaic/pipeline.py",
            "emit_pipeline",
        );
        assert_eq!(
            known_issue(id("helion-pallas"), &grid).map(|k| k.id),
            Some("helion-empty-launch-grid")
        );
        let negative = raised(
            "All elements in the grid must be strictly positive, but got grid=(-1,)",
            "jax/_src/pallas/mosaic/pipeline.py",
            "emit_pipeline",
        );
        assert!(known_issue(id("helion-pallas"), &negative).is_none());
        let slice = |shape: &str| {
            raised(
                &format!(
                    "slice slice_sizes must be less than or equal to operand shape, got slice_sizes (8, 128) for operand shape {shape}."
                ),
                "jax/_src/pallas/mosaic/primitives.py",
                "start",
            )
        };
        for empty in ["(0, 128)", "(4, 0)", "(2, 0, 128)"] {
            assert_eq!(
                known_issue(id("helion-pallas"), &slice(empty)).map(|k| k.id),
                Some("helion-empty-operand-dma-slice"),
                "{empty}"
            );
        }
        // A block slice past a non-empty operand (a tail slice over 14 rows) is a finding.
        for full in ["(14, 128)", "(10, 128)"] {
            assert!(
                known_issue(id("helion-pallas"), &slice(full)).is_none(),
                "{full}"
            );
        }
    }

    #[test]
    fn a_slice_larger_than_a_nonempty_dim_is_a_missing_pad() {
        let pad = Some("helion-ds-slice-past-unpadded-dim");
        let slice = |label: &str, dims: &str, shape: &str, file: &str, function: &str| {
            raised(
                &format!(
                    "slice {label} must be less than or equal to operand shape, got {label} {dims} for operand shape {shape}."
                ),
                file,
                function,
            )
        };
        // The shapes of the campaigns' crashes, whatever frame raised them.
        for (label, dims, shape, file, function) in [
            (
                "slice_sizes",
                "(2, 1, 16)",
                "(1, 1, 16)",
                "jax/_src/numpy/array_methods.py",
                "op",
            ),
            (
                "slice_sizes",
                "(6, 2, 128)",
                "(3, 2, 128)",
                "jax/_src/pallas/mosaic/primitives.py",
                "start",
            ),
            (
                "limit_indices",
                "(5, 2, 128)",
                "(1, 2, 128)",
                "jax/_src/pallas/mosaic/pipeline.py",
                "loop_body",
            ),
        ] {
            let s = slice(label, dims, shape, file, function);
            let rows = [row("helion-pallas", &s), row("helion-eager", &s)];
            assert_eq!(rows, [pad, None], "{dims} {shape}");
        }
        // A slice within the operand's dims, or over an empty dim, is not this row.
        let at = |shape: &str| {
            let s = slice(
                "slice_sizes",
                "(8, 128)",
                shape,
                "jax/_src/pallas/mosaic/primitives.py",
                "start",
            );
            row("helion-pallas", &s)
        };
        assert_eq!(at("(14, 128)"), None);
        assert_eq!(at("(0, 128)"), Some("helion-empty-operand-dma-slice"));
        assert!(!slice_past_nonempty_dim(
            "slice_sizes must be less than or equal to operand shape, got slice_sizes (2, 1) for operand shape (1, 1, 16)."
        ));
    }

    #[test]
    fn a_helion_row_matches_its_frame_and_message_on_the_backend_engines_only() {
        let message = "Shapes must be 1D sequences of concrete values of integer type, got (JitTracer(~int32[]), 1, 128).";
        let dma = raised(message, "jax/_src/pallas/mosaic/primitives.py", "start");
        assert_eq!(
            known_issue(id("helion-pallas"), &dma).map(|k| k.id),
            Some("helion-dma-tail-tile-traced-shape")
        );
        assert!(known_issue(id("helion-eager"), &dma).is_none());
        // The same message raised elsewhere is another cause: a finding.
        let elsewhere = raised(message, "helion/_compiler/pallas/dma.py", "emit");
        assert!(known_issue(id("helion-pallas"), &elsewhere).is_none());
        // A refusal matches only its own row, by class and message.
        let masked = EngineStatus::Refused {
            class: "InvalidConfig".into(),
            message: "config[block_sizes][0] must be a power of two, got 3".into(),
            line: None,
        };
        assert_eq!(
            known_issue(id("helion-pallas"), &masked).map(|k| k.id),
            Some("helion-refusal-masked-by-default-config")
        );
        let other = EngineStatus::Refused {
            class: "InvalidIndexingType".into(),
            message: "config[block_sizes][0] must be a power of two, got 3".into(),
            line: None,
        };
        assert!(known_issue(id("helion-pallas"), &other).is_none());
        // A Ref passed to a primitive is this row only under `emit_pipeline`'s body.
        let unpack = "Attempting to pass a Ref Ref<vmem>{float32[8,64]} to a primitive: add -- did you forget to unpack ([...]) the ref?";
        let pipelined = EngineStatus::KernelError {
            stage: tpu_runner::Stage::Run,
            kind: "ValueError".into(),
            message: unpack.into(),
            traceback: format!(
                "Traceback (most recent call last):\n  File \"/v/lib/python3.11/site-packages/jax/_src/pallas/mosaic/pipeline.py\", line 1710, in loop_body\n    x\n  File \"/v/lib/python3.11/site-packages/jax/_src/numpy/ufunc_api.py\", line 182, in __call__\n    x\nValueError: {unpack}"
            ),
        };
        assert_eq!(
            known_issue(id("helion-pallas"), &pipelined).map(|k| k.id),
            Some("helion-one-tile-pipeline-atomic-ref")
        );
        let unpipelined = raised(unpack, "jax/_src/numpy/ufunc_api.py", "__call__");
        assert!(known_issue(id("helion-pallas"), &unpipelined).is_none());
        // The pipeline's discharge of a block Ref: raised in the pipeline's loop body only.
        let inval = "Did not ask for inval to be discharged but it was. (invar=Var(id=1):Ref<vmem>{float32[2,1,8,32]}, new_inval=JitTracer(float32[2,1,8,32]))";
        let discharged = raised(inval, "jax/_src/pallas/mosaic/pipeline.py", "_");
        let rows = [
            row("helion-pallas", &discharged),
            row("helion-eager", &discharged),
        ];
        assert_eq!(rows, [Some("helion-pipeline-inval-discharged"), None]);
        let in_discharge = raised(inval, "jax/_src/state/discharge.py", "_discharge_state");
        assert_eq!(row("helion-pallas", &in_discharge), None);
        // The branch-carried local, from the launcher of 1.5.x and of 1.4.0, and nowhere else.
        let unbound = "cannot access local variable 'acc' where it is not associated with a value";
        for file in [
            "helion/runtime/pallas/launcher.py",
            "helion/runtime/__init__.py",
        ] {
            let s = raised(unbound, file, "reordered_kernel");
            assert_eq!(
                row("helion-pallas", &s),
                Some("helion-branch-carried-unbound-local")
            );
        }
        let s = raised(unbound, "helion/runtime/kernel.py", "reordered_kernel");
        assert_eq!(row("helion-pallas", &s), None);
        // Eager mode's `out_dtype` matmul on a CPU: only under Helion's matmul, only eager.
        let mm = "Could not run 'aten::mm.dtype' with arguments from the 'CPU' backend. This could be because the operator doesn't exist for this backend";
        let eager_dot = EngineStatus::KernelError {
            stage: tpu_runner::Stage::Run,
            kind: "NotImplementedError".into(),
            message: mm.into(),
            traceback: format!(
                "Traceback (most recent call last):\n  File \"/v/lib/python3.11/site-packages/helion/language/matmul_ops.py\", line 998, in _\n    x\n  File \"/v/lib/python3.11/site-packages/torch/utils/_device.py\", line 122, in __torch_function__\n    x\nNotImplementedError: {mm}"
            ),
        };
        assert_eq!(
            known_issue(id("helion-eager"), &eager_dot).map(|k| k.id),
            Some("helion-eager-dot-out-dtype-cpu")
        );
        assert!(known_issue(id("helion-pallas"), &eager_dot).is_none());
        let eager_addmm = raised(mm, "helion/runtime/ref_mode.py", "_handle_mm_with_bias");
        assert_eq!(
            known_issue(id("helion-eager"), &eager_addmm).map(|k| k.id),
            Some("helion-eager-dot-out-dtype-cpu")
        );
        let elsewhere = raised(mm, "torch/utils/_device.py", "__torch_function__");
        assert!(known_issue(id("helion-eager"), &elsewhere).is_none());
        for k in KNOWN_ISSUES {
            assert!(!k.engines.is_empty() && !k.tracked.is_empty(), "{}", k.id);
        }
    }
}
