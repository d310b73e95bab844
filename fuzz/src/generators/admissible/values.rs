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
}

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

/// Right-aligned broadcast of two shapes.
pub(super) fn broadcast(a: &[usize], b: &[usize]) -> R<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err(format!("shapes {a:?} and {b:?} do not broadcast")),
        };
    }
    Ok(out)
}

pub(super) fn promote(a: DType, b: DType) -> DType {
    match (a, b) {
        (DType::Float32, _) | (_, DType::Float32) => DType::Float32,
        (DType::Bfloat16, _) | (_, DType::Bfloat16) => DType::Bfloat16,
        (DType::Int32, DType::Int32) => DType::Int32,
    }
}

pub(super) fn norm_dim(d: i64, rank: usize) -> R<usize> {
    let r = rank as i64;
    let n = if d < 0 { d + r } else { d };
    if (0..r).contains(&n) {
        Ok(n as usize)
    } else {
        Err(format!("dim {d} out of range for rank {rank}"))
    }
}

pub(super) fn int_op(op: BinOp, a: i64, b: i64) -> R<i64> {
    let v = match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mul => a.checked_mul(b),
        BinOp::FloorDiv => {
            if b == 0 {
                return Err("floor division by zero".into());
            }
            Some(a.div_euclid(b) - i64::from(b < 0 && a.rem_euclid(b) != 0))
        }
        BinOp::Div => None,
    };
    v.filter(|v| v.abs() < 1 << 40)
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
