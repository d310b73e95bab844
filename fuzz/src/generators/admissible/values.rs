//! What the shape run computes with: the abstract values (host tensors, ints, floats, tiles,
//! device tensors with their shapes and, for small int index tensors, their exact values), the
//! storages behind host tensors (with which elements of a `torch.empty` allocation are written),
//! and the shape rules they follow (broadcasting, dtype promotion, dims, int arithmetic,
//! contiguity after indexing).

use lang::ir::{BinOp, DType, Expr, Index};

#[derive(Clone, Debug)]
pub(super) struct HostT {
    pub(super) shape: Vec<usize>,
    pub(super) dtype: DType,
    pub(super) storage: usize,
    /// Exact values of a small rank-1 int32 input (an index tensor a gather loads through),
    /// [`MAX_INDEX_INPUT`] elements at most.
    pub(super) ints: Option<std::rc::Rc<Vec<i64>>>,
}

/// The most elements of an int32 input whose values the check keeps (index tensors are one
/// entry per row of `x`; 4096 is above the generator's largest row count).
pub(super) const MAX_INDEX_INPUT: usize = 4096;

#[derive(Clone, Copy, Debug)]
pub(super) struct TileV {
    pub(super) begin: i64,
    pub(super) end: i64,
    pub(super) block: i64,
    pub(super) count: i64,
}

#[derive(Clone, Debug)]
pub(super) struct TV {
    pub(super) shape: Vec<usize>,
    pub(super) dtype: DType,
    /// Exact values of a rank-1 int tensor (index tensors).
    pub(super) ints: Option<Vec<i64>>,
    pub(super) contiguous: bool,
}

#[derive(Clone, Debug)]
pub(super) enum V {
    Host(HostT),
    Int(i64),
    Float,
    Tile(TileV),
    T(TV),
}

impl V {
    pub(super) fn what(&self) -> &'static str {
        match self {
            V::Host(_) => "a host tensor",
            V::Int(_) => "an int",
            V::Float => "a float",
            V::Tile(_) => "a tile",
            V::T(_) => "a device tensor",
        }
    }
}

pub(super) type R<T> = Result<T, String>;

/// What a storage is: whether it is an input of `torch.empty`-like poison, an empty allocation
/// with its written elements, or ordinary.
#[derive(Clone, Debug)]
pub(super) enum Storage {
    Plain,
    /// `torch.empty` allocation: which elements have been written (row-major over `shape`).
    Empty {
        shape: Vec<usize>,
        written: Vec<bool>,
        aliased: bool,
    },
}

/// Right-aligned broadcast of two shapes ([`lang::ir::arith::broadcast_shapes`]).
pub(super) fn broadcast(a: &[usize], b: &[usize]) -> R<Vec<usize>> {
    lang::ir::arith::broadcast_shapes(a, b)
        .ok_or_else(|| format!("shapes {a:?} and {b:?} do not broadcast"))
}

pub(super) use lang::ir::types::promote;

pub(super) fn norm_dim(d: i64, rank: usize) -> R<usize> {
    lang::ir::arith::norm_dim(d, rank)
        .ok_or_else(|| format!("dim {d} out of range for rank {rank}"))
}

/// Python int arithmetic ([`lang::ir::arith::int_binop`]) within the generator's range: a
/// value beyond 2^40 is not admissible.
pub(super) fn int_op(op: BinOp, a: i64, b: i64) -> R<i64> {
    if op == BinOp::FloorDiv && b == 0 {
        return Err("floor division by zero".into());
    }
    lang::ir::arith::int_binop(op, a, b)
        .filter(|v| v.unsigned_abs() < 1 << 40)
        .ok_or_else(|| "int arithmetic out of range".to_string())
}

/// Whether a value is contiguous after basic and advanced indexing with `entries` (the rule the
/// generator follows too): a tensor index makes a copy; otherwise only narrowing the first dim,
/// without a step, keeps a contiguous value contiguous.
pub(crate) fn contiguous_after(
    entries: &[Index],
    base: bool,
    is_tensor_index: &dyn Fn(&Expr) -> bool,
) -> bool {
    let mut dim = 0;
    let mut ok = base;
    for e in entries {
        match e {
            Index::NewAxis => {}
            Index::Full => dim += 1,
            Index::Int(_) => {
                ok &= dim == 0;
                dim += 1;
            }
            Index::Slice { step, .. } => {
                ok &= dim == 0 && step.is_none();
                dim += 1;
            }
            Index::Expr(x) => {
                if is_tensor_index(x) {
                    return true;
                }
                ok &= dim == 0;
                dim += 1;
            }
        }
    }
    ok
}

/// Marks (`set`) or tests (`!set`: all written?) the elements `sel` picks in a row-major bitmap.
pub(super) fn mark(shape: &[usize], sel: &[Vec<usize>], bits: &mut [bool], set: bool) -> bool {
    if sel.len() != shape.len() || sel.iter().any(|s| s.is_empty()) {
        return true;
    }
    let mut idx = vec![0usize; sel.len()];
    loop {
        let mut flat = 0;
        for (k, &i) in idx.iter().enumerate() {
            flat = flat * shape[k] + sel[k][i];
        }
        if set {
            bits[flat] = true;
        } else if !bits[flat] {
            return false;
        }
        let mut k = sel.len();
        loop {
            if k == 0 {
                return true;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < sel[k].len() {
                break;
            }
            idx[k] = 0;
        }
    }
}
