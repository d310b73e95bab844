//! Symbolic ints as affine forms over tile symbols (spec §7 item 3).
//!
//! Helion traces tile attributes to unbacked SymInts with origins (`TileBeginOrigin`, ...). The
//! planner needs exactly enough algebra to decide "this bound is the live extent
//! `t.end - t.begin` of tile t", "start + width == live extent", and structural equality of
//! `Ge(expr, const)` predicates. An affine form `c + Σ kᵢ·symᵢ` is enough, and its equality is
//! structural.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A block id: Helion's id for a tiled loop dimension, in registration order.
pub type BlockId = usize;

/// A symbol an affine form ranges over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sym {
    /// `t.begin` of the tile with this block id (`TileBeginOrigin`).
    TileBegin(BlockId),
    /// `t.end` of the tile with this block id (`TileEndOrigin`).
    TileEnd(BlockId),
    /// The block size of this block id (`_BLOCK_SIZE_k`).
    BlockSize(BlockId),
    /// `t.count` (`TileCountOrigin`).
    TileCount(BlockId),
    /// `t.id` (`TileIdOrigin`).
    TileId(BlockId),
}

impl Sym {
    /// The block id the symbol belongs to.
    pub fn block_id(self) -> BlockId {
        match self {
            Sym::TileBegin(b)
            | Sym::TileEnd(b)
            | Sym::BlockSize(b)
            | Sym::TileCount(b)
            | Sym::TileId(b) => b,
        }
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sym::TileBegin(b) => write!(f, "begin{b}"),
            Sym::TileEnd(b) => write!(f, "end{b}"),
            Sym::BlockSize(b) => write!(f, "block{b}"),
            Sym::TileCount(b) => write!(f, "count{b}"),
            Sym::TileId(b) => write!(f, "id{b}"),
        }
    }
}

/// `constant + Σ coefficient·symbol`, kept normalized (no zero coefficients).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Affine {
    /// The constant term.
    pub constant: i64,
    /// Non-zero coefficients by symbol.
    pub terms: BTreeMap<Sym, i64>,
}

impl Affine {
    /// A constant.
    pub fn constant(c: i64) -> Affine {
        Affine {
            constant: c,
            terms: BTreeMap::new(),
        }
    }

    /// A single symbol.
    pub fn sym(s: Sym) -> Affine {
        Affine {
            constant: 0,
            terms: BTreeMap::from([(s, 1)]),
        }
    }

    /// `end(b) - begin(b)`: the live extent of tile `b`.
    pub fn live_extent(b: BlockId) -> Affine {
        Affine::sym(Sym::TileEnd(b)).sub(&Affine::sym(Sym::TileBegin(b)))
    }

    /// The value if the form has no symbols.
    pub fn as_const(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// Whether the form is exactly one symbol with coefficient 1 and no constant.
    pub fn as_sym(&self) -> Option<Sym> {
        match (self.constant, self.terms.len()) {
            (0, 1) => {
                let (&s, &k) = self.terms.iter().next()?;
                (k == 1).then_some(s)
            }
            _ => None,
        }
    }

    /// The tile whose live extent `end - begin` this form is exactly, if any
    /// (Helion's `_detect_outer_block_bound`: one TileEnd and one TileBegin of the same block).
    pub fn as_live_extent(&self) -> Option<BlockId> {
        if self.constant != 0 || self.terms.len() != 2 {
            return None;
        }
        let mut it = self.terms.iter();
        let (&s1, &k1) = it.next()?;
        let (&s2, &k2) = it.next()?;
        match (s1, k1, s2, k2) {
            (Sym::TileBegin(a), -1, Sym::TileEnd(b), 1) if a == b => Some(a),
            _ => None,
        }
    }

    /// Sum.
    pub fn add(&self, other: &Affine) -> Affine {
        let mut out = self.clone();
        out.constant = out.constant.wrapping_add(other.constant);
        for (&s, &k) in &other.terms {
            let e = out.terms.entry(s).or_insert(0);
            *e = e.wrapping_add(k);
            if *e == 0 {
                out.terms.remove(&s);
            }
        }
        out
    }

    /// Difference.
    pub fn sub(&self, other: &Affine) -> Affine {
        self.add(&other.scale(-1))
    }

    /// Multiplication by a constant.
    pub fn scale(&self, k: i64) -> Affine {
        if k == 0 {
            return Affine::constant(0);
        }
        Affine {
            constant: self.constant.wrapping_mul(k),
            terms: self
                .terms
                .iter()
                .map(|(&s, &c)| (s, c.wrapping_mul(k)))
                .collect(),
        }
    }

    /// Product, when one side is constant (otherwise the result is not affine).
    pub fn mul(&self, other: &Affine) -> Option<Affine> {
        match (self.as_const(), other.as_const()) {
            (Some(a), _) => Some(other.scale(a)),
            (_, Some(b)) => Some(self.scale(b)),
            (None, None) => None,
        }
    }

    /// Floor division, only of constants by non-zero constants.
    pub fn floor_div(&self, other: &Affine) -> Option<Affine> {
        let (a, b) = (self.as_const()?, other.as_const()?);
        super::arith::floor_div(a, b).map(Affine::constant)
    }

    /// Evaluates the form with concrete symbol values.
    pub fn eval(&self, value_of: impl Fn(Sym) -> i64) -> i64 {
        self.terms.iter().fold(self.constant, |acc, (&s, &k)| {
            acc.wrapping_add(k.wrapping_mul(value_of(s)))
        })
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (s, k) in &self.terms {
            let sign = if *k < 0 {
                "-"
            } else if first {
                ""
            } else {
                "+"
            };
            let mag = k.abs();
            if mag == 1 {
                write!(f, "{sign}{s}")?;
            } else {
                write!(f, "{sign}{mag}*{s}")?;
            }
            first = false;
        }
        if first {
            write!(f, "{}", self.constant)
        } else if self.constant != 0 {
            write!(f, "{:+}", self.constant)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_extent_is_recognized_structurally() {
        let live = Affine::sym(Sym::TileEnd(0)).sub(&Affine::sym(Sym::TileBegin(0)));
        assert_eq!(live.as_live_extent(), Some(0));
        let start = live.sub(&Affine::constant(3));
        assert_eq!(start.add(&Affine::constant(3)).as_live_extent(), Some(0));
        assert_eq!(start.as_live_extent(), None);
        let other = Affine::sym(Sym::TileEnd(1)).sub(&Affine::sym(Sym::TileBegin(0)));
        assert_eq!(other.as_live_extent(), None);
        assert_eq!(Affine::sym(Sym::BlockSize(0)).as_live_extent(), None);
    }

    #[test]
    fn arithmetic_normalizes() {
        let a = Affine::sym(Sym::TileBegin(2))
            .scale(3)
            .add(&Affine::constant(4));
        assert_eq!(a.sub(&a), Affine::constant(0));
        assert_eq!(a.to_string(), "3*begin2+4");
        assert_eq!(a.eval(|_| 5), 19);
        assert_eq!(
            Affine::constant(-7).floor_div(&Affine::constant(2)),
            Some(Affine::constant(-4))
        );
    }
}
