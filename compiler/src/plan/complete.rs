//! The completeness pass and the static-value fallback (spec §2.10, db0613ca): every narrowing
//! subscript left without a resident plan is either lowered as plain basic indexing on a
//! materialized value or refused with its recorded (first) failure.

use super::Planner;
use super::links::{DefKind, ReadOrigin};
use crate::verdict::{Rejection, Rule};
use lang::ir::types::Ty;
use lang::ir::{BinOp, Expr, ExprKind, Index, NodeKey};

/// A static index of the fallback: an int, or a contiguous range `[start, start + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StaticIndex {
    Int(i64),
    Range(i64, i64),
}

impl<'a> Planner<'a, '_> {
    /// Scans narrowing subscripts in Helion's graph order, program order inside each graph
    /// (D-1.5.1-04: child graphs first, an `if`'s else before its then): fallback or the first
    /// failure.
    pub(crate) fn complete(&mut self) -> Result<(), Rejection> {
        for sub in self.links.in_graph_order(&self.links.subscripts) {
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
            return Err(self.first_failure(sub).cloned().unwrap_or_else(|| {
                Rejection::new(
                    Rule::PlanNotResident,
                    sub.span,
                    &[("name", &self.fx_node_name(sub))],
                )
            }));
        }
        Ok(())
    }

    /// The name Helion's FX graph gives the subscript node `sub` (D-1.5.1-18), which its
    /// planner messages print: the variable it is directly assigned to, else `subscript`; FX
    /// makes a name unique in its graph with `_1`, `_2`, ... Measured with Helion 1.5.1: an
    /// inline subscript after `p = ones[0, :, :]` in the same loop body is `subscript_1` (the
    /// named node took `subscript` first), and `picked = ones[local.begin, :, :]` after
    /// another `picked = ...` subscript is `picked_1`. Dead subscripts, gone before planning
    /// (D-1.5.1-15), are not counted; Helion names them while tracing.
    fn fx_node_name(&self, sub: &'a Expr) -> String {
        let graph = self.links.graph_of(sub);
        let assigned = |e: &Expr| match self.links.info(e).map(|i| i.parent) {
            Some(super::links::Parent::Stmt(stmt, super::links::Slot::AssignValue)) => {
                match &stmt.kind {
                    lang::ir::StmtKind::Assign { target, .. } => Some(target.as_str()),
                    lang::ir::StmtKind::AugAssign { .. }
                    | lang::ir::StmtKind::Store { .. }
                    | lang::ir::StmtKind::Atomic { .. }
                    | lang::ir::StmtKind::For(_)
                    | lang::ir::StmtKind::If { .. }
                    | lang::ir::StmtKind::Return(_) => None,
                }
            }
            Some(_) | None => None,
        };
        let earlier: Vec<&Expr> = self
            .links
            .subscripts
            .iter()
            .copied()
            .take_while(|e| NodeKey::of(e) != NodeKey::of(sub))
            .filter(|e| self.links.graph_of(e) == graph)
            .collect();
        let (base, taken) = match assigned(sub) {
            Some(name) => (
                name,
                earlier.iter().filter(|e| assigned(e) == Some(name)).count(),
            ),
            None => ("subscript", earlier.len()),
        };
        match taken {
            0 => base.to_string(),
            k => format!("{base}_{k}"),
        }
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
                // D-1.5.1-01: `a:b` with Python ints at trace time (literals, int arithmetic,
                // static host ints), step absent or 1 and `0 <= a < b` is a range.
                Index::Slice { start, stop, step } => {
                    let lit =
                        |b: &Option<Expr>| b.as_ref().and_then(|e| self.types.of(e).const_int());
                    let step_one = match step {
                        None => true,
                        Some(_) => lit(step) == Some(1),
                    };
                    match (lit(start), lit(stop)) {
                        (Some(a), Some(b)) if step_one && 0 <= a && a < b => {
                            Some(StaticIndex::Range(a, b - a))
                        }
                        _ => return false,
                    }
                }
                Index::Expr(e) => match self.static_index(e, 0) {
                    Some(s) => Some(s),
                    None => return false,
                },
            };
            let Some(dim) = dims.get(k) else {
                return false;
            };
            // `_concrete_size` fails on a symbolic product (a `-1` that absorbed a tiled dim).
            if idx.is_some() && dim.opaque {
                return false;
            }
            let size = dim.size;
            // D-1.5.1-03: a dim that a literal slice cut out of a tiled dim has the symbolic
            // size `Max(a, Min(b, u)) - a`, which `_concrete_size` cannot resolve.
            if idx.is_some() && self.is_literal_slice_of_tiled_dim(value, k) {
                return false;
            }
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
                    Some(s) => self.types.of(s).const_int()?,
                    None => 0,
                };
                let st = match step {
                    Some(s) => self.types.of(s).const_int()?,
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
            ExprKind::Binary {
                op: BinOp::Mul | BinOp::Div | BinOp::FloorDiv,
                ..
            }
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
            | ExprKind::TileAttr { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Load { .. }
            | ExprKind::Subscript { .. }
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

    /// Whether dim `k` of `value` (a same-graph subscript, through names) is a literal slice
    /// of a tiled dim of its input (D-1.5.1-03).
    fn is_literal_slice_of_tiled_dim(&self, value: &'a Expr, k: usize) -> bool {
        let mut v = value;
        for _ in 0..256 {
            match &v.kind {
                ExprKind::Name(_) => match self.links.read_origin(v) {
                    ReadOrigin::Same(def) => match def.kind {
                        DefKind::Assign(val) => v = val,
                        DefKind::Aug | DefKind::LoopVar | DefKind::Param => return false,
                    },
                    ReadOrigin::Placeholder | ReadOrigin::Merge => return false,
                },
                ExprKind::Subscript { value, indices } => {
                    let Some(input) = self.types.of(value).dims() else {
                        return false;
                    };
                    // Walk the entries, counting output dims, to the one that makes dim k.
                    let (mut out, mut d) = (0usize, 0usize);
                    for index in indices {
                        let (makes, consumes) = match index {
                            Index::NewAxis => (1, 0),
                            Index::Full | Index::Slice { .. } => (1, 1),
                            Index::Int(_) => (0, 1),
                            Index::Expr(e) => match self.types.of(e) {
                                Ty::Tensor { dims, .. } => (dims.len(), 1),
                                Ty::Tile(_) => (1, 1),
                                Ty::HostTensor { .. }
                                | Ty::Int(_)
                                | Ty::Float
                                | Ty::Bool
                                | Ty::Mask { .. }
                                | Ty::GridIndex(_) => (0, 1),
                            },
                        };
                        if out + makes > k {
                            return matches!(index, Index::Slice { .. })
                                && input.get(d).is_some_and(|dim| dim.block.is_some());
                        }
                        out += makes;
                        d += consumes;
                    }
                    return false;
                }
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
                | ExprKind::View { .. }
                | ExprKind::Permute { .. }
                | ExprKind::Op { .. }
                | ExprKind::Alloc { .. } => return false,
            }
        }
        false
    }

    /// Walking the input through the registered aten views, the first other node decides:
    /// an earlier narrowing subscript defers to its own static-value flag as the scan has set
    /// it, any other `call_function` qualifies (D-1.5.1-02). A capture placeholder stands for
    /// the `_new_var` Helion inserts for every tensor captured into a loop or branch body, so
    /// it qualifies too; only a kernel parameter or a loop variable does not.
    fn value_input_qualifies(&self, value: &'a Expr) -> bool {
        let mut v = value;
        for _ in 0..256 {
            match &v.kind {
                ExprKind::View { value, .. } => v = value,
                ExprKind::Subscript { .. } => return self.static_value.contains(&NodeKey::of(v)),
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
                    ReadOrigin::Placeholder | ReadOrigin::Merge => return true,
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
                | ExprKind::Op { .. }
                | ExprKind::Alloc { .. } => return true,
            }
        }
        false
    }
}
