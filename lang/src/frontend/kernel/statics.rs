//! What the frontend knows statically about a tensor name while it reads the body: its dtype
//! and its rank. Helion kernels spell dtypes and sizes through tensors (`acc.to(out.dtype)`,
//! `m, n = x.size()`, `hl.tile(out.size())`); under `static_shapes=True` both are known when
//! the kernel is traced, and the frontend desugars them into the IR's literal forms
//! (`.to(torch.float32)`, `m = x.size(0)`, `hl.tile([out.size(0), out.size(1)])`), which the
//! renderer writes back. A parameter's facts come from the input the call passes (the inputs
//! sit at the bottom of the script); a local's from its value by the IR's type rules
//! (`ir::types`), restricted to the forms whose answer needs no tracing: where a rule would
//! need more (a load's rank, the dtype of mixed arithmetic) the fact is unknown and the
//! construct that asks for it is refused with its position, never guessed.

use crate::ir::{AllocShape, DType, Expr, ExprKind, ViewOp};

/// The static facts about one tensor-valued name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Known {
    /// Element type, when known.
    pub dtype: Option<DType>,
    /// Rank, when known.
    pub rank: Option<usize>,
}

/// The facts about `e`, given those about the names it reads.
pub(crate) fn known(e: &Expr, name: &impl Fn(&str) -> Known) -> Known {
    match &e.kind {
        ExprKind::Name(n) => name(n),
        ExprKind::Load { tensor, .. } => Known {
            dtype: name(tensor).dtype,
            rank: None,
        },
        ExprKind::Zeros { shape, dtype } | ExprKind::Full { shape, dtype, .. } => Known {
            dtype: Some(*dtype),
            rank: Some(shape.len()),
        },
        ExprKind::Cast { value, dtype } => Known {
            dtype: Some(*dtype),
            rank: known(value, name).rank,
        },
        ExprKind::Permute { value, .. } => known(value, name),
        ExprKind::Subscript { value, .. } => Known {
            dtype: known(value, name).dtype,
            rank: None,
        },
        ExprKind::Sum { value, .. } => {
            let k = known(value, name);
            Known {
                dtype: k.dtype,
                rank: k.rank.and_then(|r| r.checked_sub(1)),
            }
        }
        ExprKind::View { value, op } => {
            let k = known(value, name);
            let rank = match op {
                ViewOp::Reshape(d) | ViewOp::View(d) => Some(d.len()),
                // `.squeeze(d)` keeps a dim that is not 1: the rank needs the size.
                ViewOp::Squeeze(_) => None,
                ViewOp::Unsqueeze(_) => k.rank.map(|r| r + 1),
                ViewOp::ViewAs(o) => known(o, name).rank,
            };
            Known {
                dtype: k.dtype,
                rank,
            }
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            let (l, r) = (known(lhs, name), known(rhs, name));
            Known {
                // torch promotion of two tensors of one dtype keeps it; anything else (a
                // scalar operand, true division of ints, mixed dtypes) is not claimed here.
                dtype: l.dtype.filter(|_| l.dtype == r.dtype),
                rank: None,
            }
        }
        ExprKind::Alloc { shape, dtype, .. } => {
            let (like_dtype, rank) = match shape {
                AllocShape::Dims(d) => (None, Some(d.len())),
                AllocShape::Like(t) => {
                    let k = known(t, name);
                    (k.dtype, k.rank)
                }
            };
            Known {
                // torch's default dtype for an allocation without dtype= is float32.
                dtype: dtype.or(like_dtype).or(match shape {
                    AllocShape::Dims(_) => Some(DType::Float32),
                    AllocShape::Like(_) => None,
                }),
                rank,
            }
        }
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Size { .. }
        | ExprKind::TileAttr { .. }
        | ExprKind::Compare { .. }
        | ExprKind::Op { .. }
        | ExprKind::Arange { .. } => Known::default(),
    }
}
