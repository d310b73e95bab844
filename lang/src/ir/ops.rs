//! The torch and `hl` operations on device values that are neither indexing nor views: the
//! elementwise functions (`torch.exp`, `torch.relu`, `torch.rsqrt`, `torch.maximum`,
//! `torch.minimum`), `%`, comparisons used as values (boolean masks) and `&`/`|` on them,
//! `torch.where`, the reductions `sum`/`amax`/`amin` over several dims (or all) with `keepdim`,
//! `.transpose`, and the matrix products (`torch.matmul`, `torch.bmm`, `torch.addmm`,
//! `torch.baddbmm`, `hl.dot`), and `torch.nn.functional.pad` with a constant fill.
//!
//! They share one IR node, [`crate::ir::ExprKind::Op`], so the passes that only walk operands
//! (scopes, liveness, the reducer) handle all of them at once, while every question about what
//! an op *means* (its type, its value, its lowering, its spelling) is a `match` over [`TensorOp`]
//! here, exhaustive, so a new op fails to compile until each of them answers.

use super::CmpOp;
use serde::{Deserialize, Serialize};

/// One operation of [`crate::ir::ExprKind::Op`]; its operands are the node's `args`, in the
/// order given per variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TensorOp {
    /// `torch.exp(x)`: float result (ints promote to float32).
    Exp,
    /// `torch.relu(x)`: keeps the dtype.
    Relu,
    /// `torch.rsqrt(x)`: float result (ints promote to float32).
    Rsqrt,
    /// A float elementwise function of one tensor ([`UnaryFn`]): `torch.sigmoid`, `torch.sin`,
    /// ...; float result (ints promote to float32).
    Unary(UnaryFn),
    /// `torch.maximum(a, b)`: NaN propagates.
    Maximum,
    /// `torch.minimum(a, b)`: NaN propagates.
    Minimum,
    /// Python's builtin `min(a, b)` of two scalar ints (host sizes, tile attributes, grid
    /// indices, 0-d int values loaded from a tensor): the bound of a data-dependent loop as
    /// Helion's kernels write it, `hl.tile(start, min(end, tile.end))`.
    IntMin,
    /// Python's builtin `max(a, b)` of two scalar ints, as [`TensorOp::IntMin`]:
    /// `hl.tile(max(start, tile.begin - 16), end)`.
    IntMax,
    /// `a % b`: Python's and torch's `remainder` (the sign of the divisor).
    Mod,
    /// `a & b`: logical on masks, bitwise on ints.
    And,
    /// `a | b`: logical on masks, bitwise on ints.
    Or,
    /// `a <cmp> b` as a value: a boolean mask (an `if` condition stays
    /// [`crate::ir::ExprKind::Compare`]).
    Cmp(CmpOp),
    /// `torch.where(cond, a, b)`.
    Where,
    /// `torch.sum`/`amax`/`amin(x, dims, keepdim=...)` or the method forms.
    Reduce {
        /// Which reduction.
        kind: ReduceKind,
        /// The reduced dims; `None` reduces all of them.
        dims: Option<Vec<i64>>,
        /// `keepdim=True`.
        keepdim: bool,
    },
    /// `x.transpose(d0, d1)` (`torch.transpose`).
    Transpose(i64, i64),
    /// `torch.matmul(a, b)` (2-D by 2-D here: the shapes Helion's kernels use).
    Matmul,
    /// `torch.bmm(a, b)`: batched, 3-D by 3-D.
    Bmm,
    /// `torch.addmm(bias, a, b)`: `bias + a @ b`.
    Addmm,
    /// `torch.baddbmm(bias, a, b)`: `bias + bmm(a, b)`.
    Baddbmm,
    /// `hl.dot(a, b)` or `hl.dot(a, b, acc)`: 2-D or 3-D; with `acc`, `acc + a @ b` in `acc`'s
    /// dtype.
    Dot,
    /// `torch.nn.functional.pad(x, pads, value=v)` (mode `"constant"`; `aten.constant_pad_nd`):
    /// the operands are `x` and the fill `v` (a Python number); `pads` are `(before, after)`
    /// pairs from the last dim backwards, non-negative int literals. Keeps `x`'s dtype.
    Pad(Vec<i64>),
}

/// The function of [`TensorOp::Unary`]: torch's float elementwise functions beside `exp` and
/// `rsqrt` (which version 1 of the format spells as their own ops). One variant carries them
/// all so that a new function is one line here and one in the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnaryFn {
    /// `torch.sigmoid`.
    Sigmoid,
    /// `torch.sin`.
    Sin,
    /// `torch.cos`.
    Cos,
    /// `torch.tanh`.
    Tanh,
    /// `torch.exp2`.
    Exp2,
    /// `torch.log`.
    Log,
    /// `torch.sqrt`.
    Sqrt,
}

impl UnaryFn {
    /// All functions.
    pub const ALL: [UnaryFn; 7] = [
        UnaryFn::Sigmoid,
        UnaryFn::Sin,
        UnaryFn::Cos,
        UnaryFn::Tanh,
        UnaryFn::Exp2,
        UnaryFn::Log,
        UnaryFn::Sqrt,
    ];

    /// The torch name (`sigmoid`, `sin`, ...): `torch.<name>(x)` and `x.<name>()`.
    pub fn name(self) -> &'static str {
        match self {
            UnaryFn::Sigmoid => "sigmoid",
            UnaryFn::Sin => "sin",
            UnaryFn::Cos => "cos",
            UnaryFn::Tanh => "tanh",
            UnaryFn::Exp2 => "exp2",
            UnaryFn::Log => "log",
            UnaryFn::Sqrt => "sqrt",
        }
    }

    /// The construct name for messages and coverage (`torch.sigmoid`, ...).
    pub fn construct(self) -> &'static str {
        match self {
            UnaryFn::Sigmoid => "torch.sigmoid",
            UnaryFn::Sin => "torch.sin",
            UnaryFn::Cos => "torch.cos",
            UnaryFn::Tanh => "torch.tanh",
            UnaryFn::Exp2 => "torch.exp2",
            UnaryFn::Log => "torch.log",
            UnaryFn::Sqrt => "torch.sqrt",
        }
    }

    /// Parses the torch name.
    pub fn from_name(name: &str) -> Option<UnaryFn> {
        UnaryFn::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The function on one value, in f64 (the reference rounds the result to the dtype).
    pub fn apply(self, v: f64) -> f64 {
        match self {
            UnaryFn::Sigmoid => 1.0 / (1.0 + (-v).exp()),
            UnaryFn::Sin => v.sin(),
            UnaryFn::Cos => v.cos(),
            UnaryFn::Tanh => v.tanh(),
            UnaryFn::Exp2 => v.exp2(),
            UnaryFn::Log => v.ln(),
            UnaryFn::Sqrt => v.sqrt(),
        }
    }
}

/// The reduction of [`TensorOp::Reduce`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReduceKind {
    /// `sum`: ints sum to int64, floats in their own dtype.
    Sum,
    /// `amax`.
    Amax,
    /// `amin`.
    Amin,
    /// `argmax`: the index of the first largest value along one dim (or of the flattened
    /// tensor); a NaN counts as the largest. torch's result is int64, which this IR types as
    /// int32 (the reference computes int64).
    Argmax,
    /// `argmin`: as [`ReduceKind::Argmax`], the first smallest (a NaN counts as the smallest).
    Argmin,
}

impl ReduceKind {
    /// All reductions.
    pub const ALL: [ReduceKind; 5] = [
        ReduceKind::Sum,
        ReduceKind::Amax,
        ReduceKind::Amin,
        ReduceKind::Argmax,
        ReduceKind::Argmin,
    ];

    /// The torch name (`sum`, `amax`, `amin`, `argmax`, `argmin`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "sum",
            ReduceKind::Amax => "amax",
            ReduceKind::Amin => "amin",
            ReduceKind::Argmax => "argmax",
            ReduceKind::Argmin => "argmin",
        }
    }

    /// Whether the reduction is an index (`argmax`/`argmin`): one dim or none, an int result.
    pub fn is_index(self) -> bool {
        matches!(self, ReduceKind::Argmax | ReduceKind::Argmin)
    }

    /// Parses the torch name.
    pub fn from_name(name: &str) -> Option<ReduceKind> {
        ReduceKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl TensorOp {
    /// How many operands the op takes: `(min, max)`.
    pub fn arity(&self) -> (usize, usize) {
        match self {
            TensorOp::Exp
            | TensorOp::Relu
            | TensorOp::Rsqrt
            | TensorOp::Unary(_)
            | TensorOp::Reduce { .. }
            | TensorOp::Transpose(..) => (1, 1),
            TensorOp::Maximum
            | TensorOp::Minimum
            | TensorOp::IntMin
            | TensorOp::IntMax
            | TensorOp::Mod
            | TensorOp::And
            | TensorOp::Or
            | TensorOp::Cmp(_)
            | TensorOp::Matmul
            | TensorOp::Bmm
            | TensorOp::Pad(_) => (2, 2),
            TensorOp::Where | TensorOp::Addmm | TensorOp::Baddbmm => (3, 3),
            TensorOp::Dot => (2, 3),
        }
    }

    /// A short name for messages, coverage cells and gaps (`torch.exp`, `%`, `hl.dot`, ...).
    pub fn construct(&self) -> &'static str {
        match self {
            TensorOp::Exp => "torch.exp",
            TensorOp::Relu => "torch.relu",
            TensorOp::Rsqrt => "torch.rsqrt",
            TensorOp::Unary(f) => f.construct(),
            TensorOp::Maximum => "torch.maximum",
            TensorOp::Minimum => "torch.minimum",
            TensorOp::IntMin => "min(...)",
            TensorOp::IntMax => "max(...)",
            TensorOp::Mod => "%",
            TensorOp::And => "&",
            TensorOp::Or => "|",
            TensorOp::Cmp(_) => "a comparison as a mask",
            TensorOp::Where => "torch.where",
            TensorOp::Reduce {
                kind: ReduceKind::Sum,
                ..
            } => "torch.sum",
            TensorOp::Reduce {
                kind: ReduceKind::Amax,
                ..
            } => "torch.amax",
            TensorOp::Reduce {
                kind: ReduceKind::Amin,
                ..
            } => "torch.amin",
            TensorOp::Reduce {
                kind: ReduceKind::Argmax,
                ..
            } => "torch.argmax",
            TensorOp::Reduce {
                kind: ReduceKind::Argmin,
                ..
            } => "torch.argmin",
            TensorOp::Transpose(..) => ".transpose",
            TensorOp::Matmul => "torch.matmul",
            TensorOp::Bmm => "torch.bmm",
            TensorOp::Addmm => "torch.addmm",
            TensorOp::Baddbmm => "torch.baddbmm",
            TensorOp::Dot => "hl.dot",
            TensorOp::Pad(_) => "torch.nn.functional.pad",
        }
    }

    /// Whether the op's result is exact in the reference (no transcendental, no accumulation
    /// order): the comparison module gives the others a documented tolerance.
    pub fn is_exact(&self) -> bool {
        match self {
            TensorOp::Relu
            | TensorOp::Maximum
            | TensorOp::Minimum
            | TensorOp::IntMin
            | TensorOp::IntMax
            | TensorOp::Mod
            | TensorOp::And
            | TensorOp::Or
            | TensorOp::Cmp(_)
            | TensorOp::Where
            | TensorOp::Transpose(..)
            | TensorOp::Pad(_) => true,
            TensorOp::Reduce { kind, .. } => !matches!(kind, ReduceKind::Sum),
            TensorOp::Exp
            | TensorOp::Rsqrt
            | TensorOp::Unary(_)
            | TensorOp::Matmul
            | TensorOp::Bmm
            | TensorOp::Addmm
            | TensorOp::Baddbmm
            | TensorOp::Dot => false,
        }
    }
}
