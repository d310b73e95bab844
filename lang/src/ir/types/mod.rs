//! Trace-time types of a kernel under one config: what Helion's fake tensors say.
//!
//! Every expression gets a [`Ty`]: a host tensor, a device tensor with per-dim sizes (each dim
//! tagged with the block id it came from, if any), a symbolic int ([`Affine`]), a tile, a grid
//! index, a float scalar or a predicate. Sizes are Helion's *fake* sizes, not eager ones: a
//! tile-indexed dim has the block size (not the clipped live extent) and `blk[1:10]` has 9 rows
//! whatever the block holds (spec §1.10) — the planner reasons with these, and the defects of
//! spec §4 live in the gap between them and the eager reference.
//!
//! Types depend on the config only through block sizes; [`infer`] uses the *effective* sizes
//! (spec §1.1a).
//!
//! A pointwise operator on literal slices of tiled dims whose symbolic sizes differ traces in
//! Helion and is refused only by its codegen: [`infer`] refuses it like any other type error,
//! [`infer_deferring`] records it ([`Types::deferred`]) for the compiler to refuse in
//! Helion's order.
//!
//! Inference is split by concern, one `impl Infer` per module: this module holds the types,
//! the inference state and the shape rules shared by all (promotion, broadcasting); [`stmt`]
//! types statements (bindings, stores and atomics, loops to a fixed point), [`expr`]
//! expressions and arithmetic, [`shape`] the fake shapes of size arguments, views and
//! subscripts.

mod expr;
mod ops;
mod shape;
mod stmt;

use super::blocks::{BlockSizes, BlockTable};
use super::hash::FastMap;
use super::scope::{HostEnv, StorageId};
use super::sym::{Affine, BlockId, Sym};
use super::{Case, DType, Expr, ExprKind, Index, NodeKey, Span, TileAttr};

/// One dimension of a device tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim {
    /// Concrete size under this config.
    pub size: i64,
    /// The block id whose block size this dim is, if it came from a tile.
    pub block: Option<BlockId>,
    /// `(block, start, stop)` when the dim is a literal slice `start:stop` of the tiled dim of
    /// `block`: Helion sizes it `Max(start, Min(stop, u)) - start`, a symbol that only the same
    /// slice of the same block equals (D-1.5.1-03), so it broadcasts with nothing else but 1.
    pub slice_of: Option<(BlockId, i64, i64)>,
    /// With `slice_of`: the slice's size `Max(start, Min(stop, u)) - start` is at most 1 over
    /// the block symbol's range (`u` in `[1, next_pow2(extent hint)]`), so torch's broadcast
    /// lets it through as a possible 1 (D-1.5.1-03; measured: `x_block[1:2] * x_block`, and
    /// `x_block[1:4] * x_block[0:3]` under `hl.tile(2)` with block 2, trace in 1.5.1).
    pub at_most_one: bool,
    /// Helion holds the size as a symbolic product it cannot make concrete for a config: a
    /// `reshape`/`view` `-1` that absorbs a tiled dim together with another factor (`2*u` from
    /// `[u, 2, 128].reshape(-1, 128)`), or a literal slice of one. Measured with Helion 1.5.1:
    /// a view to such a shape is refused as having "no concrete physical shape", and a
    /// narrowing subscript on it does not take the static-value fallback (D-1.5.1-01); the
    /// `-1` of `[u, 1, 128].reshape(-1, 128)` is `u` itself and stays concrete.
    pub opaque: bool,
    /// A literal slice `a:b` of a tiled dim whose size `Max(a, Min(b, u)) - a` takes more
    /// than one value over the block symbol's range and reaches 2, whatever the block's
    /// source (config or a fixed `block_size=`): an expression of the symbol that
    /// `_concrete_size` does not resolve (it resolves the symbol itself), so a resident view
    /// whose output keeps such a dim has "no concrete physical shape". A tail `live - w : live`
    /// is `w` wide, concrete; a slice at most one row wide plans as a view (measured in
    /// 1.5.1: `x_block[1:2][None][:, :, 1:2]` lowers, `x_block[3:4][:, None].squeeze(1)` is
    /// refused only for its later unaligned selector).
    /// Measured with Helion 1.5.1 (seed-2033 finding 0010 and its variants): under a fixed
    /// block of 5 and a config block of 4, `x_block[1:4][None][:, 0:2]` is refused so, while
    /// `x_block[1:4][None]` consumed by a sum lowers (its view is no resident transform then).
    /// Unlike [`Dim::slice_of`] it says nothing of broadcasting: a fixed block's slice traces
    /// as a number.
    pub sliced: bool,
}

impl Dim {
    /// A dim of a fixed size.
    pub fn fixed(size: i64) -> Dim {
        Dim {
            size,
            block: None,
            slice_of: None,
            at_most_one: false,
            opaque: false,
            sliced: false,
        }
    }

    /// The dim of block `block`, `size` under this config.
    pub fn tiled(size: i64, block: BlockId) -> Dim {
        Dim {
            size,
            block: Some(block),
            slice_of: None,
            at_most_one: false,
            opaque: false,
            sliced: false,
        }
    }

    /// A concrete size 1, which broadcasts against anything.
    fn is_concrete_one(self) -> bool {
        self.size == 1 && self.block.is_none() && self.slice_of.is_none() && !self.opaque
    }

    /// Broadcasts against anything at trace time: a concrete 1, or a literal slice one row
    /// wide of a tiled dim, `Max(a, Min(a + 1, u)) - a`, which may be 1 (measured with Helion
    /// 1.5.1, config block 8 over 16 rows: `x_block[1:2] * x_block`, `x_block * x_block[3:4]`,
    /// `x_block[1:2] + hl.zeros([8, 128])` and `x_block[1:2] * x_block[3:4]` all lower, while
    /// `x_block[0:8] * x_block` and `x_block[1:3] * x_block` are ShapeMismatches).
    fn broadcasts_as_one(self) -> bool {
        self.is_concrete_one() || (self.slice_of.is_some() && self.at_most_one)
    }
}

/// The type of an expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// A host tensor (kernel parameter, host allocation or alias).
    HostTensor {
        /// Element type.
        dtype: DType,
        /// Concrete shape.
        shape: Vec<i64>,
        /// Storage identity.
        storage: StorageId,
    },
    /// A device tensor value.
    Tensor {
        /// Element type.
        dtype: DType,
        /// Dims.
        dims: Vec<Dim>,
    },
    /// A scalar int: affine over tile symbols when known, `None` when not affine.
    Int(Option<Affine>),
    /// A Python float scalar.
    Float,
    /// A predicate (`if` condition).
    Bool,
    /// A boolean mask: a comparison of tensors, `&`/`|` of masks ([`ops`]).
    Mask {
        /// Dims.
        dims: Vec<Dim>,
    },
    /// A tile loop variable.
    Tile(BlockId),
    /// A grid loop variable (a scalar index).
    GridIndex(BlockId),
}

impl Ty {
    /// Dims of a device tensor, if it is one.
    pub fn dims(&self) -> Option<&[Dim]> {
        match self {
            Ty::Tensor { dims, .. } | Ty::Mask { dims } => Some(dims),
            Ty::HostTensor { .. }
            | Ty::Int(_)
            | Ty::Float
            | Ty::Bool
            | Ty::Tile(_)
            | Ty::GridIndex(_) => None,
        }
    }

    /// Element type of a (host or device) tensor.
    pub fn dtype(&self) -> Option<DType> {
        match self {
            Ty::Tensor { dtype, .. } | Ty::HostTensor { dtype, .. } => Some(*dtype),
            Ty::Int(_)
            | Ty::Float
            | Ty::Bool
            | Ty::Mask { .. }
            | Ty::Tile(_)
            | Ty::GridIndex(_) => None,
        }
    }

    /// The affine value of a scalar int: a symbolic int's form, or a grid index as the begin
    /// of its tile (a grid index is the loop's offset). `None` for an int that is not affine
    /// and for everything that is not an int.
    pub fn int_value(&self) -> Option<Affine> {
        match self {
            Ty::Int(a) => a.clone(),
            Ty::GridIndex(b) => Some(Affine::sym(Sym::TileBegin(*b))),
            Ty::HostTensor { .. }
            | Ty::Tensor { .. }
            | Ty::Mask { .. }
            | Ty::Float
            | Ty::Bool
            | Ty::Tile(_) => None,
        }
    }

    /// The value of a scalar int whose affine form has no symbols: what sympy would fold to a
    /// Python int. A grid index, a tile attribute or a non-affine int is not one.
    pub fn const_int(&self) -> Option<i64> {
        match self {
            Ty::Int(Some(a)) => a.as_const(),
            Ty::Int(None)
            | Ty::HostTensor { .. }
            | Ty::Tensor { .. }
            | Ty::Mask { .. }
            | Ty::Float
            | Ty::Bool
            | Ty::Tile(_)
            | Ty::GridIndex(_) => None,
        }
    }
}

/// A kernel Helion could not trace (shape mismatch, unknown name, bad view, ...).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{span}: {message}")]
pub struct TypeError {
    /// Where.
    pub span: Span,
    /// What.
    pub message: String,
}

/// The types of every expression of a case under its config.
#[derive(Clone, Debug)]
pub struct Types {
    /// Type of every expression node, keyed by [`NodeKey`] of the borrowed case.
    pub exprs: FastMap<NodeKey, Ty>,
    /// Block ids.
    pub blocks: BlockTable,
    /// Configured and effective block sizes.
    pub block_sizes: BlockSizes,
    /// Host tensors and ints.
    pub host: HostEnv,
    /// The first (program order) pointwise operator on two tensors whose sizes differ only at
    /// literal slices of tiled dims: Helion 1.5.1 traces it (those sizes are symbolic, so
    /// fake-tensor broadcasting cannot tell them apart) and its codegen refuses it
    /// (`ShapeMismatch` from inductor lowering's `_check_block_broadcast_compatibility`),
    /// after resident-Ref planning. Only [`infer_deferring`] and
    /// [`infer_deferring_with_block_sizes`] return types that hold one.
    pub deferred: Option<TypeError>,
}

impl Types {
    /// The type of `e` (which must belong to the case the types were inferred for).
    pub fn of(&self, e: &Expr) -> &Ty {
        self.exprs.get(&NodeKey::of(e)).unwrap_or(&Ty::Int(None))
    }

    /// Whether the index entry `i` gathers: an expression of tensor type that is not a tile's
    /// own `t.index` (which reads the tile's rows, as the tile itself does). The one classifier
    /// of tensor indices, for the model's gather and for Helion's bind-time indirect-access
    /// checks alike.
    pub fn is_tensor_index(&self, i: &Index) -> bool {
        match i {
            Index::Expr(x) => {
                matches!(self.of(x), Ty::Tensor { .. })
                    && !matches!(
                        x.kind,
                        ExprKind::TileAttr {
                            attr: TileAttr::Index,
                            ..
                        }
                    )
            }
            Index::Full | Index::NewAxis | Index::Int(_) | Index::Slice { .. } => false,
        }
    }

    /// The effective block size of a block id.
    pub fn block_size(&self, b: BlockId) -> i64 {
        self.block_sizes.effective.get(b).copied().unwrap_or(1)
    }
}

/// Infers the types of `case` under its config: a kernel that does not trace or holds a
/// deferred mismatch ([`Types::deferred`]) is an error.
pub fn infer(case: &Case) -> Result<Types, TypeError> {
    undeferred(infer_sized(case, None))
}

/// [`infer`], except that a mismatch Helion refuses only at codegen ([`Types::deferred`]) is
/// kept in the types rather than returned: the compiler plans such a kernel first, as Helion
/// does (campaign finding 0047: a not-aligned resident load refused before the mismatch).
pub fn infer_deferring(case: &Case) -> Result<Types, TypeError> {
    infer_sized(case, None)
}

/// [`infer_with_block_sizes`], deferring as [`infer_deferring`] does.
pub fn infer_deferring_with_block_sizes(
    case: &Case,
    block_sizes: &BlockSizes,
) -> Result<Types, TypeError> {
    infer_sized(case, Some(block_sizes))
}

fn undeferred(types: Result<Types, TypeError>) -> Result<Types, TypeError> {
    match types {
        Ok(Types {
            deferred: Some(e), ..
        }) => Err(e),
        other => other,
    }
}

/// Infers the types of `case` under block sizes decided on another version of it: the case
/// before its dead statements were removed (`lang::ir::dead`), which has the same loops and so
/// the same block ids. Helion 1.5.1 registers block-size minimums while tracing, before dead
/// nodes are removed (D-1.5.1-15), so a dead load can still raise a block (D-1.5.1-08).
pub fn infer_with_block_sizes(case: &Case, block_sizes: &BlockSizes) -> Result<Types, TypeError> {
    undeferred(infer_sized(case, Some(block_sizes)))
}

fn infer_sized(case: &Case, sizes: Option<&BlockSizes>) -> Result<Types, TypeError> {
    let host = HostEnv::of(case);
    let blocks = BlockTable::of(&case.kernel);
    let block_sizes = match sizes {
        Some(s) => s.clone(),
        None => case.block_sizes_with(&blocks, &host, |e| host.eval_int(e)),
    };
    let mut cx = Infer {
        host: &host,
        blocks: &blocks,
        sizes: &block_sizes,
        // Room for the host names and the names a typical kernel binds: growing the map from
        // empty rehashed it three or four times per trace.
        env: FastMap::with_capacity_and_hasher(64, Default::default()),
        // Room for every expression of a typical generated case: growing the table was 2.5% of
        // `infer` (perf, 2026-11-30).
        exprs: FastMap::with_capacity_and_hasher(256, Default::default()),
        loop_depth: 0,
        rebound: Vec::new(),
        deferred: std::cell::OnceCell::new(),
    };
    for (name, t) in &host.tensors {
        cx.env.insert(
            name,
            Ty::HostTensor {
                dtype: t.dtype,
                shape: t.shape.iter().map(|&d| d as i64).collect(),
                storage: t.storage,
            },
        );
    }
    for (name, v) in &host.ints {
        cx.env.insert(name, Ty::Int(Some(Affine::constant(*v))));
    }
    for p in &case.kernel.params {
        match p.kind {
            crate::ir::ParamKind::Float => {
                cx.env.insert(&p.name, Ty::Float);
            }
            crate::ir::ParamKind::Bool => {
                cx.env.insert(&p.name, Ty::Bool);
            }
            crate::ir::ParamKind::Tensor | crate::ir::ParamKind::Int => {}
        }
    }
    cx.body(&case.kernel.body)?;
    let exprs = std::mem::take(&mut cx.exprs);
    let deferred = cx.deferred.take();
    drop(cx);
    Ok(Types {
        exprs,
        blocks,
        block_sizes,
        host,
        deferred,
    })
}

struct Infer<'a> {
    host: &'a HostEnv,
    blocks: &'a BlockTable,
    sizes: &'a BlockSizes,
    /// Names borrow from the case and the host environment: an owned key per assignment was a
    /// fifth of `infer`'s allocations.
    env: FastMap<&'a str, Ty>,
    exprs: FastMap<NodeKey, Ty>,
    /// How many loops enclose the statement being typed.
    loop_depth: usize,
    /// Inside loops, each binding replaced and what it replaced (`None`: the name was not
    /// bound), in order: what a loop's stability check compares (`stmt::for_loop`).
    rebound: Vec<(&'a str, Option<Ty>)>,
    /// The first deferred mismatch ([`Types::deferred`]); set through `&self` because the
    /// operator typing it borrows the recorded operand types.
    deferred: std::cell::OnceCell<TypeError>,
}

fn err(span: Span, message: impl Into<String>) -> TypeError {
    TypeError {
        span,
        message: message.into(),
    }
}

/// torch type promotion between two tensor dtypes.
pub fn promote(a: DType, b: DType) -> DType {
    match (a, b) {
        (DType::Float32, _) | (_, DType::Float32) => DType::Float32,
        (DType::Bfloat16, _) | (_, DType::Bfloat16) => DType::Bfloat16,
        (DType::Int32, DType::Int32) => DType::Int32,
    }
}

/// A shape for messages: sizes, and a literal slice of a tiled dim as Helion prints it
/// (`Max(1, Min(7, u1)) - 1`, with the block id for the symbol).
pub fn shape_repr(dims: &[Dim]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| match d.slice_of {
            Some((b, 0, stop)) => format!("Max(0, Min({stop}, u{b}))"),
            Some((b, a, stop)) => format!("Max({a}, Min({stop}, u{b})) - {a}"),
            None => d.size.to_string(),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// How a pointwise operator's operands broadcast ([`Infer::broadcast_pointwise`]).
enum Pointwise {
    /// They broadcast to these dims.
    Broadcast(Vec<Dim>),
    /// They do not, but only at literal slices of tiled dims whose symbolic sizes torch's
    /// fake-tensor broadcasting lets through; the left operand's size is kept at those dims.
    SymbolicMismatch(Vec<Dim>),
    /// They do not, and tracing refuses it.
    Mismatch,
}

impl Infer<'_> {
    /// [`broadcast`] of a pointwise operator's operands, telling a mismatch that only Helion's
    /// codegen refuses from one its tracing refuses. Measured in helion==1.5.1 (S2, 16 rows):
    /// torch's broadcasting raises at trace time (`TorchOpTracingError`, "The size of tensor
    /// a (...) must match the size of tensor b") exactly when the two sizes differ with each
    /// block symbol at the top of its range ([`Infer::symbol_top_size`]): under block 4,
    /// `x_block[1:3] * x_block[0:3]` (2 and 3) and `x_block[0:2] * x_block` (2 and 16) raise
    /// there, while `x_block[1:7] * x_block[0:6]` (6 and 6) traces and is a `ShapeMismatch`
    /// of the codegen; under block 8, `x_block[0:4] + hl.zeros([4, 128])` traces and
    /// `x_block[2:4] + hl.zeros([3, 128])` does not.
    fn broadcast_pointwise(&self, a: &[Dim], b: &[Dim]) -> Pointwise {
        if let Some(dims) = broadcast(a, b) {
            return Pointwise::Broadcast(dims);
        }
        let n = a.len().max(b.len());
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let x = (i + a.len()).checked_sub(n).map(|k| a[k]);
            let y = (i + b.len()).checked_sub(n).map(|k| b[k]);
            match (x, y) {
                (Some(x), Some(y)) if symbolic_mismatch(x, y) => {
                    if self.symbol_top_size(x) != self.symbol_top_size(y) {
                        return Pointwise::Mismatch;
                    }
                    out.push(x);
                }
                (Some(x), Some(y)) => match broadcast(&[x], &[y]) {
                    Some(d) => out.extend(d),
                    None => return Pointwise::Mismatch,
                },
                (Some(d), None) | (None, Some(d)) => out.push(d),
                (None, None) => {}
            }
        }
        Pointwise::SymbolicMismatch(out)
    }
}

/// Two dims that differ in their literal slices of tiled dims, neither of which may be 1.
fn symbolic_mismatch(x: Dim, y: Dim) -> bool {
    x.slice_of != y.slice_of && !x.broadcasts_as_one() && !y.broadcasts_as_one()
}

/// Broadcasts two shapes (numpy rules); `None` when incompatible.
pub fn broadcast(a: &[Dim], b: &[Dim]) -> Option<Vec<Dim>> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let x = (i + a.len()).checked_sub(n).map(|k| a[k]);
        let y = (i + b.len()).checked_sub(n).map(|k| b[k]);
        out.push(match (x, y) {
            (Some(x), None) => x,
            (None, Some(y)) => y,
            // Helion compares symbolic sizes as sympy does: a literal slice of a tiled dim
            // equals only the same slice (measured: `x_block[1:7] * x_block[0:6]` is a
            // ShapeMismatch in 1.5.1), unless one side may be 1.
            (Some(x), Some(y)) if symbolic_mismatch(x, y) => return None,
            (Some(x), Some(y)) if x.size == y.size => Dim {
                size: x.size,
                block: x.block.or(y.block),
                slice_of: x.slice_of,
                at_most_one: x.at_most_one,
                opaque: x.opaque && y.opaque,
                sliced: x.sliced && y.sliced,
            },
            (Some(x), Some(y)) if x.size == 1 || x.broadcasts_as_one() => y,
            (Some(x), Some(y)) if y.size == 1 || y.broadcasts_as_one() => x,
            _ => return None,
        });
    }
    Some(out)
}
