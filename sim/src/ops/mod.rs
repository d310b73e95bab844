//! Array operations with JAX's semantics on XLA:CPU: promotion, broadcasting, elementwise
//! arithmetic rounded per operation to the result dtype (XLA computes bfloat16 in float32 and
//! rounds after every op, which equals exact bfloat16 arithmetic: double rounding through a
//! format with at least 2p+2 bits is innocuous), `jnp.floor_divide`/`jnp.remainder` as JAX
//! builds them from `lax.div`/`lax.rem`, NaN-propagating `minimum`/`maximum`, saturating
//! float→int conversion, basic indexing of values (out-of-range indices clamp), reshapes,
//! transposes and `broadcast_to`.
//!
//! Layout: [`broadcast`] (shapes, strided iteration, `broadcast_to`), [`convert`] (dtype
//! conversion), [`elementwise`] (arithmetic, comparisons, `where`), [`layout`] (reshape,
//! transpose), [`index`] (basic indexing, dynamic slices, strided windows) and [`dot`]
//! (`lax.dot_general`, `jax.nn.one_hot`). Callers use the
//! re-exports below.

mod broadcast;
mod convert;
mod dot;
mod elementwise;
mod index;
mod layout;

pub(crate) use broadcast::broadcast_to;
pub(crate) use convert::{astype, cast, convert};
pub(crate) use dot::{DotDims, dot_general, one_hot};
pub(crate) use elementwise::{binary, compare, min_max, neg, where_};
pub(crate) use index::{
    VIdx, contiguous, dynamic_slice_in_dim, for_each_strided, index_value, slice_range,
    strided_copy,
};
pub(crate) use layout::{reshape, transpose};

use crate::error::{ErrorKind, SimError};

fn trace_err(kind: ErrorKind, msg: impl Into<String>) -> SimError {
    SimError::trace(kind, msg)
}
