//! Where Helion's eager mode computes something other than torch by a rule of its own that
//! the reference does not follow: the reference computes torch's value and records the
//! construct here ([`crate::Outputs::divergences`]), so the harness can name the cause of a
//! `helion-eager` difference (a known issue, `fuzz::known_issues`) instead of the reference
//! agreeing with eager mode where torch would not.
//!
//! The one rule of the reference for Helion's eager mode ([`crate::Tiling::HelionEager`]): it
//! follows eager mode where Helion defines it differently on purpose and documents it (one
//! tile per config-driven `hl.tile`), and reports every other departure from torch here.

use lang::ir::Span;

/// One departure of Helion's eager mode from torch that a case reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Divergence {
    /// A read through an integer-tensor index with a negative entry: torch wraps it (`-1` is
    /// the last row), Helion 1.5.1's eager mode clamps it into the dim first (`-1` reads row
    /// 0): `torch.clamp(idx, min=0, max=tensor.size(dim) - 1)` in
    /// `RefModeTorchFunctionMode._handle_getitem`, `helion/runtime/ref_mode.py` line 551.
    NegativeIndexClamped {
        /// The subscript that read through it.
        span: Span,
    },
}

impl Divergence {
    /// The stable kebab-case id, e.g. `negative-index-clamped`.
    pub fn id(self) -> &'static str {
        match self {
            Divergence::NegativeIndexClamped { .. } => "negative-index-clamped",
        }
    }

    /// The construct that reached it.
    pub fn span(self) -> Span {
        match self {
            Divergence::NegativeIndexClamped { span } => span,
        }
    }
}
