//! The one constant-evaluation kit: Python's int arithmetic on `i64`, dim normalization, and
//! the evaluation of static int expressions under a name environment.
//!
//! The validator, the planner, the lowering, the Pallas AST's folding, the executor and the
//! generator's admissibility check all ask these questions; they answer them here, so a rule
//! such as "floor division rounds toward negative infinity" is written once. The reference
//! (`pallas-diff-oracle`) deliberately keeps its own arithmetic: it is the independent opinion
//! every finding is judged against.
//!
//! Every function is total: a zero divisor or a result beyond `i64` is `None`, never a panic
//! (`i64::MIN // -1` overflows in Rust's `div_euclid`; Python gives 2**63).

use super::{BinOp, Expr, ExprKind};

/// Python's `a // b` (rounds toward negative infinity); `None` for `b == 0` or an overflow.
pub fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div_euclid(b)?;
    // Euclidean division rounds a negative divisor's quotient up where a remainder is left.
    Some(if b < 0 && a.checked_rem_euclid(b)? != 0 {
        q - 1
    } else {
        q
    })
}

/// `a / b` rounded toward positive infinity (Python's `-(-a // b)`): for `a >= 0` and `b > 0`,
/// the number of blocks of `b` elements that cover `a` elements (a tile loop's trip count, an
/// iota's or a slice's length). `None` for `b == 0` or an overflow.
pub fn ceil_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    // Truncating division rounds a positive quotient down where a remainder is left.
    Some(if a.checked_rem(b)? != 0 && (a < 0) == (b < 0) {
        q + 1
    } else {
        q
    })
}

/// Python's `a % b` (the sign of `b`); `None` for `b == 0` or an overflow.
pub fn floor_mod(a: i64, b: i64) -> Option<i64> {
    a.checked_sub(b.checked_mul(floor_div(a, b)?)?)
}

/// `a op b` on Python ints: `+ - * //` (checked); true division is not an int.
pub fn int_binop(op: BinOp, a: i64, b: i64) -> Option<i64> {
    match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mul => a.checked_mul(b),
        BinOp::FloorDiv => floor_div(a, b),
        BinOp::Div => None,
    }
}

/// A possibly negative dim of a rank-`rank` value, as an index (`None` out of range).
pub fn norm_dim(dim: i64, rank: usize) -> Option<usize> {
    let d = if dim < 0 {
        dim.checked_add(rank as i64)?
    } else {
        dim
    };
    usize::try_from(d).ok().filter(|&d| d < rank)
}

/// NumPy's broadcasting of one pair of right-aligned dims (a missing dim is 1): equal sizes, or
/// one of them 1; `None` when they do not broadcast.
pub fn broadcast_dim(a: usize, b: usize) -> Option<usize> {
    if a == b || b == 1 {
        Some(a)
    } else if a == 1 {
        Some(b)
    } else {
        None
    }
}

/// NumPy's broadcasting of two concrete shapes ([`broadcast_dim`] per right-aligned dim).
/// Symbolic shapes broadcast by [`super::types::broadcast`], which also compares Helion's
/// slice symbols.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| (i + s.len()).checked_sub(n).map_or(1, |k| s[k]);
    (0..n)
        .map(|i| broadcast_dim(dim(a, i), dim(b, i)))
        .collect()
}

/// What names and sizes mean to [`static_int`].
pub trait IntEnv {
    /// The static int a name is bound to, if it is one.
    fn name(&self, name: &str) -> Option<i64>;
    /// The static value of `size` (an [`ExprKind::Size`] of `value` at `dim`), if static.
    fn size(&self, size: &Expr, value: &Expr, dim: i64) -> Option<i64>;
}

/// The value of `e` when it is a static int: int literals, names and sizes the environment
/// knows, and `+ - * //` on those ([`int_binop`]).
pub fn static_int(e: &Expr, env: &impl IntEnv) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Name(n) => env.name(n),
        ExprKind::Size { value, dim } => env.size(e, value, *dim),
        ExprKind::Binary { op, lhs, rhs } => {
            int_binop(*op, static_int(lhs, env)?, static_int(rhs, env)?)
        }
        ExprKind::Float(_)
        | ExprKind::TileAttr { .. }
        | ExprKind::Compare { .. }
        | ExprKind::Load { .. }
        | ExprKind::Subscript { .. }
        | ExprKind::Arange { .. }
        | ExprKind::Zeros { .. }
        | ExprKind::Full { .. }
        | ExprKind::Cast { .. }
        | ExprKind::Sum { .. }
        | ExprKind::View { .. }
        | ExprKind::Permute { .. }
        | ExprKind::Op { .. }
        | ExprKind::Alloc { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_division_and_modulo_are_pythons() {
        // (a, b, a // b, a % b) as Python 3 computes them.
        for (a, b, q, r) in [
            (7, 2, 3, 1),
            (-7, 2, -4, 1),
            (7, -2, -4, -1),
            (-7, -2, 3, -1),
            (6, -3, -2, 0),
            (0, -5, 0, 0),
        ] {
            assert_eq!(floor_div(a, b), Some(q), "{a} // {b}");
            assert_eq!(floor_mod(a, b), Some(r), "{a} % {b}");
        }
        assert_eq!(floor_div(1, 0), None);
        assert_eq!(floor_mod(1, 0), None);
        // Python: -2**63 // -1 == 2**63, beyond i64: none, not a panic.
        assert_eq!(floor_div(i64::MIN, -1), None);
        assert_eq!(floor_mod(i64::MIN, -1), None);
        assert_eq!(int_binop(BinOp::Add, i64::MAX, 1), None);
        assert_eq!(int_binop(BinOp::Div, 4, 2), None);
    }

    #[test]
    fn ceiling_division_is_pythons() {
        // (a, b, -(-a // b)) as Python 3 computes them.
        for (a, b, q) in [
            (0, 4, 0),
            (1, 4, 1),
            (8, 4, 2),
            (9, 4, 3),
            (-7, 2, -3),
            (7, -2, -3),
            (-7, -2, 4),
            (i64::MAX, 2, 1 << 62),
        ] {
            assert_eq!(ceil_div(a, b), Some(q), "-(-{a} // {b})");
        }
        assert_eq!(ceil_div(1, 0), None);
        assert_eq!(ceil_div(i64::MIN, -1), None);
    }

    #[test]
    fn shapes_broadcast_like_numpy() {
        assert_eq!(broadcast_shapes(&[4, 1], &[3]), Some(vec![4, 3]));
        assert_eq!(broadcast_shapes(&[], &[2, 5]), Some(vec![2, 5]));
        assert_eq!(broadcast_shapes(&[1, 5], &[7, 1]), Some(vec![7, 5]));
        assert_eq!(broadcast_shapes(&[4, 2], &[3]), None);
        assert_eq!(broadcast_shapes(&[0], &[1]), Some(vec![0]));
    }

    #[test]
    fn dims_normalize_like_torch() {
        assert_eq!(norm_dim(-1, 3), Some(2));
        assert_eq!(norm_dim(2, 3), Some(2));
        assert_eq!(norm_dim(3, 3), None);
        assert_eq!(norm_dim(-4, 3), None);
        assert_eq!(norm_dim(i64::MIN, 3), None);
    }
}
