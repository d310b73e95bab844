//! Known divergences between engines that are not bugs of the compiler under test: one row per
//! divergence, with the evidence and where it is tracked. A matching engine error is classified
//! `known-issue` (counted in every campaign table, never hidden, never a finding). The goal is to
//! empty this table: re-check each row when JAX is upgraded (`PALLAS_DIFF_JAX_VERSION`).

use crate::engines::EngineStatus;

/// One known divergence.
#[derive(Debug)]
pub struct KnownIssue {
    /// Stable id, e.g. `jax-tpu-interpret-ref-reshape`.
    pub id: &'static str,
    /// The engine it affects.
    pub engine: &'static str,
    /// What happens and why it is not a compiler bug.
    pub summary: &'static str,
    /// Where it is tracked (upstream issue, or this repository's note).
    pub tracked: &'static str,
    /// Whether an engine status is this divergence.
    pub matches: fn(&EngineStatus) -> bool,
    /// Whether an emitted module will likely hit it (its text shows the construct): such a
    /// module is compiled alone, not in a batch, because one failing kernel makes the worker
    /// compile every kernel of its batch again (see `engines::jax`). Only a scheduling hint:
    /// the outcome still comes from running the module.
    pub likely_in: fn(&str) -> bool,
}

fn error_text(status: &EngineStatus) -> Option<String> {
    match status {
        EngineStatus::KernelError {
            kind,
            message,
            traceback,
            ..
        } => Some(format!("{kind}\n{message}\n{traceback}")),
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

/// The table.
pub const KNOWN_ISSUES: &[KnownIssue] = &[KnownIssue {
    id: "jax-tpu-interpret-ref-reshape",
    engine: "pallas-tpu-interpret",
    summary: "JAX 0.10.2's TPU interpreter cannot read through a Ref reshape transform \
              (`x_block.reshape((...))`, spec §3.3): `AttributeError: 'ReshapeTransform' object \
              has no attribute 'indices'`. The same module runs in the generic interpreter and \
              lowers with Mosaic (pallas-tpu-lower), so it is an interpreter gap, not a \
              lowering bug. Measured 2026-11-30 on every spec kernel with a resident view.",
    tracked: "pallas-diff notes (issue 5); to report to jax-ml/jax with a repro.py",
    matches: |s| {
        error_text(s).is_some_and(|t| t.contains("'ReshapeTransform' object has no attribute"))
    },
    // A Ref reshape prints as `ref.reshape((...))`, a value reshape as `jnp.reshape(x, ...)`.
    // Measured 2026-12-01 on the first 64 kernels `bench --jax` takes from seed 0: 9 failed
    // with this issue, and exactly those 9 hold a Ref reshape by this test.
    likely_in: |source| {
        source.matches(".reshape((").count() > source.matches("jnp.reshape((").count()
    },
}];

/// Whether `source` likely hits a known issue of `engine` ([`KnownIssue::likely_in`]).
pub fn likely_known_issue(engine: &str, source: &str) -> bool {
    KNOWN_ISSUES
        .iter()
        .any(|k| k.engine == engine && (k.likely_in)(source))
}

/// The known issue an engine's status matches, if any.
pub fn known_issue(engine: &str, status: &EngineStatus) -> Option<&'static KnownIssue> {
    KNOWN_ISSUES
        .iter()
        .find(|k| k.engine == engine && (k.matches)(status))
}
