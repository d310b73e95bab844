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
//! let case = compiler::frontend::parse_case(src, "k.py").unwrap();
//! let outputs = pallas_diff_oracle::evaluate(&case).unwrap();
//! assert!(outputs.outputs[0].tensor.values.iter().all(|&v| v == 6.0));
//! ```
//!
//! Semantics in one place (details in the module docs):
//! * block sizes are the *effective* ones (spec §1.1a), never padding: `x[tile, :]` is exactly
//!   the live rows (module `exec`);
//! * indexing is torch's basic and advanced indexing (module `index`);
//! * arithmetic follows torch's type promotion; float32 is correctly rounded, bfloat16 rounds
//!   through float32 then to nearest even, int32 wraps (module `ty`, module `dense`);
//! * `.sum` uses NumPy's summation order (module `sum`);
//! * loads are snapshots and stores/atomics mutate in program order; `torch.empty` memory is
//!   poison that may not be read (module `exec`).

mod dense;
mod error;
mod exec;
mod index;
mod output;
mod plan;
mod sum;
mod ty;

pub use error::{EvalError, EvalErrorKind};
pub use exec::{MAX_ITERATIONS, MAX_WORK};
pub use output::{Output, OutputSummary, Outputs, Stats, fnv1a64};
pub use plan::Plan;

use compiler::ir::Case;

/// Evaluates `case` eagerly: its returned tensors in return order, or why the case is invalid.
/// Equivalent to `Plan::compile(case)?.run()`; compile a [`Plan`] once to run a case many times.
pub fn evaluate(case: &Case) -> Result<Outputs, EvalError> {
    Plan::compile(case)?.run()
}
