//! The vocabulary every pallas-diff crate speaks, with no opinion about Helion's lowering.
//!
//! It owns the kernel IR ([`ir`]: the case, its types and scopes, blocks and the static
//! evaluation of host expressions), the case-script frontend ([`frontend`]: Python source or
//! case JSON in, a well-formed [`ir::Case`] or an error naming file, line and construct out), the
//! renderer back to a case script ([`render`]), tensors and dtypes ([`tensor`]), and the Pallas
//! AST the codegen emits with its Python printer ([`pallas`]).
//!
//! The system under test (`pallas-diff-compiler`), the reference (`pallas-diff-oracle`), the
//! JAX runner (`pallas-diff-tpu-runner`) and the executor (`pallas-diff-sim`) all build on it;
//! nothing here may depend on them.

pub mod frontend;
pub mod ir;
pub mod pallas;
pub mod render;
mod render_ops;
pub mod tensor;
