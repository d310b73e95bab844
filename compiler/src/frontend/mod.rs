//! The frontend: a case script (Python source, see `shared/spec/case-script.md`) in, a [`Case`]
//! out, using a real Python parser (`rustpython-parser`), never a hand-written one.
//!
//! The frontend decides *whether a script is a case*: the imports, the one decorated kernel, the
//! config keys, the inputs, the call, and the kernel-body subset. Everything outside case-script
//! v1 is a [`FrontendError`] naming the file, line, column and construct. Whether Helion accepts
//! the kernel is not its question: trace-time refusals are verdicts ([`crate::validate`]).

mod error;
mod kernel;
mod module;

pub use error::FrontendError;

use crate::ir::Case;

/// Parses a case script. `path` is only used in error messages.
pub fn parse_case(source: &str, path: &str) -> Result<Case, FrontendError> {
    module::parse_module(source, path)
}
