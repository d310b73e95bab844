//! The completeness pass and the static-value fallback (spec §2.10, db0613ca): every narrowing
//! subscript left without a resident plan is either lowered as plain basic indexing on a
//! materialized value or refused with its recorded (first) failure.

use super::Planner;
use super::links::{DefKind, ReadOrigin};
use crate::ir::types::Ty;
use crate::ir::{BinOp, Expr, ExprKind, Index, NodeKey};
use crate::render;
use crate::verdict::{Rejection, Rule};

/// A static index of the fallback: an int, or a contiguous range `[start, start + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StaticIndex {
    Int(i64),
    Range(i64, i64),
}

impl<'a> Planner<'a, '_> {
    /// Scans narrowing subscripts in program order: fallback or the first failure.
    pub(crate) fn complete(&mut self) -> Result<(), Rejection> {
        for &sub in &self.links.subscripts.clone() {
            let ExprKind::Subscript { indices, .. } = &sub.kind else {
                continue;
            };
            if !indices.iter().any(Index::is_narrowing) {
                continue;
            }
            let key = NodeKey::of(sub);
            if self.resident.contains_key(&key) {
                continue;
            }
            if self.is_static_basic_value_subscript(sub) {
                self.static_value.insert(key);
                continue;
            }
            self.replay_failures();
            return Err(self.failures.get(&key).cloned().unwrap_or_else(|| {
                Rejection::new(
                    Rule::PlanNotResident,
                    sub.span,
                    &[("name", &render::expr(sub))],
                )
            }));
        }
        Ok(())
    }

    /// `_is_static_basic_value_subscript` (db0613ca, spec §2.10 step 1).
    pub(crate) fn is_static_basic_value_subscript(&self, sub: &'a Expr) -> bool {
        let ExprKind::Subscript { value, indices } = &sub.kind else {
            return false;
        };
        let Some(dims) = self.types.of(value).dims() else {
            return false;
        };
        let mut k = 0;
        for index in indices {
            let idx = match index {
                Index::NewAxis => continue,
                Index::Full => None,
                Index::Int(i) => Some(StaticIndex::Int(*i)),
                Index::Slice { .. } => return false,
                Index::Expr(e) => match self.static_index(e, 0) {
                    Some(s) => Some(s),
                    None => return false,
                },
            };
            let Some(size) = dims.get(k).map(|d| d.size) else {
                return false;
            };
            let fits = match idx {
                None => true,
                Some(StaticIndex::Int(i)) => -size <= i && i < size,
                Some(StaticIndex::Range(start, len)) => {
                    start >= 0 && start.saturating_add(len) <= size
                }
            };
            if !fits {
                return false;
            }
            k += 1;
        }
        self.value_input_qualifies(value)
    }

    /// A static index: a Python int (including int arithmetic and static host ints), an iota
    /// with int start ≥ 0, step 1 and int length, or `range ± int` / `int + range` keeping the
    /// start ≥ 0. Same-graph names are the node they bind; a capture placeholder is not static.
    fn static_index(&self, e: &'a Expr, depth: usize) -> Option<StaticIndex> {
        if depth > 64 {
            return None;
        }
        if let Ty::Int(Some(a)) = self.types.of(e) {
            return a.as_const().map(StaticIndex::Int);
        }
        match &e.kind {
            ExprKind::Arange { start, step, .. } => {
                let s = match start {
                    Some(s) => self.int_const(s)?,
                    None => 0,
                };
                let st = match step {
                    Some(s) => self.int_const(s)?,
                    None => 1,
                };
                let len = self.types.of(e).dims()?.first()?.size;
                (s >= 0 && st == 1).then_some(StaticIndex::Range(s, len))
            }
            ExprKind::Binary {
                op: op @ (BinOp::Add | BinOp::Sub),
                lhs,
                rhs,
            } => {
                let l = self.static_index(lhs, depth + 1)?;
                let r = self.static_index(rhs, depth + 1)?;
                let out = match (op, l, r) {
                    (BinOp::Add, StaticIndex::Range(s, n), StaticIndex::Int(c))
                    | (BinOp::Add, StaticIndex::Int(c), StaticIndex::Range(s, n)) => {
                        StaticIndex::Range(s.checked_add(c)?, n)
                    }
                    (BinOp::Sub, StaticIndex::Range(s, n), StaticIndex::Int(c)) => {
                        StaticIndex::Range(s.checked_sub(c)?, n)
                    }
                    _ => return None,
                };
                match out {
                    StaticIndex::Range(s, _) if s < 0 => None,
                    other => Some(other),
                }
            }
            ExprKind::Name(_) => match self.links.read_origin(e) {
                ReadOrigin::Same(def) => match def.kind {
                    DefKind::Assign(v) => self.static_index(v, depth + 1),
                    DefKind::Aug | DefKind::LoopVar | DefKind::Param => None,
                },
                ReadOrigin::Placeholder | ReadOrigin::Merge => None,
            },
            _ => None,
        }
    }

    fn int_const(&self, e: &Expr) -> Option<i64> {
        match self.types.of(e) {
            Ty::Int(Some(a)) => a.as_const(),
            _ => None,
        }
    }

    /// Walking the input through the registered aten views, the first other node must be a
    /// `call_function` that is not `hl.subscript`: a placeholder (capture) or an earlier
    /// subscript disqualifies it (spec §2.10).
    fn value_input_qualifies(&self, value: &'a Expr) -> bool {
        let mut v = value;
        for _ in 0..256 {
            match &v.kind {
                ExprKind::View { value, .. } => v = value,
                ExprKind::Subscript { .. } => return false,
                ExprKind::Name(_) => match self.links.read_origin(v) {
                    ReadOrigin::Same(def) => match def.kind {
                        // `y = x` is a `_new_var`: a call_function.
                        DefKind::Assign(val) if matches!(val.kind, ExprKind::Name(_)) => {
                            return true;
                        }
                        DefKind::Assign(val) => v = val,
                        DefKind::Aug => return true,
                        DefKind::LoopVar | DefKind::Param => return false,
                    },
                    ReadOrigin::Placeholder => return false,
                    ReadOrigin::Merge => return true,
                },
                ExprKind::Int(_)
                | ExprKind::Float(_)
                | ExprKind::Size { .. }
                | ExprKind::TileAttr { .. }
                | ExprKind::Binary { .. }
                | ExprKind::Compare { .. }
                | ExprKind::Load { .. }
                | ExprKind::Arange { .. }
                | ExprKind::Zeros { .. }
                | ExprKind::Full { .. }
                | ExprKind::Cast { .. }
                | ExprKind::Sum { .. }
                | ExprKind::Permute { .. }
                | ExprKind::Alloc { .. } => return true,
            }
        }
        false
    }
}
