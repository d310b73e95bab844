//! Input errors of the frontend: anything outside case-script v1, named by file, line, column
//! and construct. These are *input* errors (exit 2), distinct from a trace-time refusal, which is
//! a verdict on a well-formed case.

use crate::ir::Span;

/// A case script that is not a well-formed case.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}:{span}: {message}")]
pub struct FrontendError {
    /// The script's path (as given to the parser).
    pub path: String,
    /// Where.
    pub span: Span,
    /// The construct, e.g. `while`, `import numpy`, `block_sizes`.
    pub construct: String,
    /// The whole message, naming the construct.
    pub message: String,
}
