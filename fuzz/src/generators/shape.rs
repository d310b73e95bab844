//! The generator's picture of a device value: its dims, each either fixed or the data-dependent
//! row count of the current tile, and whether `.view` may be applied to it. Every read the
//! generator builds is tracked here, so it can always bring the read back to the accumulator's
//! shape (sums over row dims, squeezes, a final permute) and stay valid for the eager reference.

use super::make::{cast, permute, sum, view};
use lang::ir::arith::ceil_div;
use lang::ir::{DType, Expr, ExprKind, ViewOp};

/// A dim of a device value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dim {
    /// A size that is the same on every iteration.
    Fixed(usize),
    /// A row count that varies with the tile (the live rows of a block, a run of them).
    Rows,
}

/// A device value's shape as the generator knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Val {
    /// Dims, outermost first.
    pub dims: Vec<Dim>,
    /// Whether the value is contiguous (`.view` needs it; otherwise `.reshape` is used).
    pub contiguous: bool,
}

impl Val {
    pub fn new(dims: Vec<Dim>) -> Val {
        Val {
            dims,
            contiguous: true,
        }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The position of the first row dim, if any.
    pub fn rows_axis(&self) -> Option<usize> {
        self.dims.iter().position(|d| *d == Dim::Rows)
    }

    pub fn rows_count(&self) -> usize {
        self.dims.iter().filter(|d| **d == Dim::Rows).count()
    }
}

/// Python's slice length `len(range(d)[a:b:s])` for step `s > 0`.
pub(crate) fn slice_len(start: Option<i64>, stop: Option<i64>, step: i64, d: usize) -> usize {
    let d = d as i64;
    let norm = |v: i64| if v < 0 { (v + d).max(0) } else { v.min(d) };
    let a = start.map_or(0, norm);
    let b = stop.map_or(d, norm);
    if b <= a {
        0
    } else {
        ceil_div(b - a, step).map_or(0, |n| n as usize)
    }
}

/// Brings `e` (of shape `val`) to a value that broadcasts to exactly `target` (rank 1 or 2):
/// casts to float32 (unless it is float32 by construction), sums every row dim away, drops
/// extra leading dims (squeezing size-1 dims where `squeeze` says so, summing otherwise),
/// permutes a transposed pair back, and sums then unsqueezes any dim that still disagrees.
pub(crate) fn reduce_to(
    mut e: Expr,
    mut val: Val,
    target: &[usize],
    squeeze: &mut dyn FnMut() -> bool,
) -> Expr {
    if !is_float32(&e) {
        e = cast(e, DType::Float32);
    }
    while let Some(ax) = val.dims.iter().rposition(|d| *d == Dim::Rows) {
        e = sum(e, ax as i64);
        val.dims.remove(ax);
    }
    while val.rank() > target.len() {
        match val.dims.iter().position(|d| *d == Dim::Fixed(1)) {
            Some(ax) if squeeze() => {
                e = view(e, ViewOp::Squeeze(ax as i64));
                val.dims.remove(ax);
            }
            _ => {
                e = sum(e, 0);
                val.dims.remove(0);
            }
        }
    }
    let fixed: Vec<usize> = val
        .dims
        .iter()
        .map(|d| match d {
            Dim::Fixed(n) => *n,
            Dim::Rows => 1,
        })
        .collect();
    if fixed.len() == 2
        && target.len() == 2
        && fixed[0] == target[1]
        && fixed[1] == target[0]
        && fixed[0] != fixed[1]
        && fixed.iter().zip(target).any(|(f, t)| f != t && *f != 1)
    {
        return permute(e, vec![1, 0]);
    }
    let lead = target.len() - fixed.len();
    for (i, &f) in fixed.iter().enumerate() {
        if f != 1 && f != target[lead + i] {
            e = view(sum(e, i as i64), ViewOp::Unsqueeze(i as i64));
        }
    }
    e
}

/// Whether `e` is float32 by construction: a cast to float32, or arithmetic on such casts.
fn is_float32(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Cast { dtype, .. } => *dtype == DType::Float32,
        ExprKind::Binary { lhs, rhs, .. } => is_float32(lhs) && is_float32(rhs),
        ExprKind::Name(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Size { .. }
        | ExprKind::TileAttr { .. }
        | ExprKind::Compare { .. }
        | ExprKind::Load { .. }
        | ExprKind::Subscript { .. }
        | ExprKind::Arange { .. }
        | ExprKind::Zeros { .. }
        | ExprKind::Full { .. }
        | ExprKind::Sum { .. }
        | ExprKind::View { .. }
        | ExprKind::Permute { .. }
        | ExprKind::Op { .. }
        | ExprKind::Alloc { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_len_follows_python() {
        assert_eq!(slice_len(Some(1), Some(3), 1, 4), 2);
        assert_eq!(slice_len(Some(-3), Some(2), 1, 4), 1);
        assert_eq!(slice_len(Some(1), Some(10), 1, 4), 3);
        assert_eq!(slice_len(None, None, 2, 5), 3);
        assert_eq!(slice_len(Some(3), Some(2), 1, 5), 0);
        assert_eq!(slice_len(Some(-9), None, 1, 4), 4);
    }
}
