//! Statements of a device loop body: the statement list and its dispatch, assignments (a static
//! int folds into the environment, a tile, grid index or host tensor is aliased, anything else
//! binds a Python variable) and augmented assignments (`+=`, folded on static ints, typed by
//! torch promotion otherwise). Loops are in `loops`, `if` in `branch`, stores and atomics in
//! `memory`.

use super::carry::carried_ty;
use super::{Env, LResult, Lowerer, Val, gap, py_name};
use lang::ir::live::{Names, live_after};
use lang::ir::types::{Ty, broadcast, promote};
use lang::ir::{Expr, ExprKind, Stmt, StmtKind};
use lang::pallas::{self, Expr as P, Target};
use lang::tensor::DType;

type PStmt = pallas::Stmt;

/// `name = value`.
pub(super) fn assign(name: impl Into<String>, value: P) -> PStmt {
    PStmt::Assign {
        target: Target::Name(name.into()),
        value,
    }
}

/// The type of `a <op> b` (for `+=`), following torch promotion.
fn combine_ty(op: lang::ir::BinOp, a: &Ty, b: &Ty) -> Ty {
    let div = op == lang::ir::BinOp::Div;
    match (a, b) {
        (Ty::Tensor { dtype: x, dims: dx }, Ty::Tensor { dtype: y, dims: dy }) => {
            let mut dtype = promote(*x, *y);
            if div && dtype == DType::Int32 {
                dtype = DType::Float32;
            }
            Ty::Tensor {
                dtype,
                dims: broadcast(dx, dy).unwrap_or_else(|| dx.clone()),
            }
        }
        (Ty::Tensor { dtype, dims }, s) | (s, Ty::Tensor { dtype, dims }) => {
            let float = matches!(s, Ty::Float) || div;
            let dtype = if *dtype == DType::Int32 && float {
                DType::Float32
            } else {
                *dtype
            };
            Ty::Tensor {
                dtype,
                dims: dims.clone(),
            }
        }
        (Ty::Float, _) | (_, Ty::Float) => Ty::Float,
        (
            Ty::HostTensor { .. }
            | Ty::Int(_)
            | Ty::Bool
            | Ty::Mask { .. }
            | Ty::Tile(_)
            | Ty::GridIndex(_),
            Ty::HostTensor { .. }
            | Ty::Int(_)
            | Ty::Bool
            | Ty::Mask { .. }
            | Ty::Tile(_)
            | Ty::GridIndex(_),
        ) => {
            if div {
                Ty::Float
            } else {
                Ty::Int(None)
            }
        }
    }
}

impl Lowerer<'_> {
    /// Lowers a statement list; `live_after` are the names read after it.
    pub(super) fn lower_body(
        &mut self,
        stmts: &[Stmt],
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live_after: &Names,
    ) -> LResult<()> {
        // Liveness is needed only where a loop or a branch decides what to carry, so it is
        // computed there, from the statements after it (`rest`) and `live_after`.
        for (i, s) in stmts.iter().enumerate() {
            self.lower_stmt(s, &stmts[i + 1..], env, out, live_after)?;
        }
        Ok(())
    }

    fn lower_stmt(
        &mut self,
        s: &Stmt,
        rest: &[Stmt],
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live: &Names,
    ) -> LResult<()> {
        match &s.kind {
            StmtKind::Assign { target, value } => self.lower_assign(target, value, env, out),
            StmtKind::AugAssign { target, op, value } => {
                let old = env.get(target).cloned();
                let Some(old_ty) = old.as_ref().and_then(carried_ty) else {
                    return gap(
                        s.span,
                        format!("`{target} {}=` of a name that holds no value", op.symbol()),
                    );
                };
                if let (Some(Val::Int(a)), Some(b)) = (&old, self.static_int(value, env)) {
                    let folded = match op {
                        lang::ir::BinOp::Add => a.checked_add(b),
                        lang::ir::BinOp::Sub => a.checked_sub(b),
                        lang::ir::BinOp::Mul => a.checked_mul(b),
                        lang::ir::BinOp::FloorDiv | lang::ir::BinOp::Div => None,
                    };
                    if let Some(v) = folded {
                        env.insert(target.clone(), Val::Int(v));
                        return Ok(());
                    }
                }
                let lhs = self.lower_name(target, env, s.span)?;
                let rhs = self.lower_expr(value, env, out)?;
                let ty = combine_ty(*op, &old_ty, self.types.of(value));
                let py = py_name(target);
                out.push(assign(
                    py.clone(),
                    P::Binary {
                        op: super::expr::bin_op(*op),
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    },
                ));
                env.insert(target.clone(), Val::Value { py, ty });
                Ok(())
            }
            StmtKind::Store {
                tensor,
                indices,
                value,
                ..
            } => self.lower_store(tensor, indices, value, None, env, out, s.span),
            StmtKind::Atomic {
                op,
                tensor,
                indices,
                expected,
                value,
            } => self.lower_store(
                tensor,
                indices,
                value,
                Some((*op, expected.as_ref())),
                env,
                out,
                s.span,
            ),
            StmtKind::For(lp) => {
                let live = live_after(rest, live);
                self.lower_loop(lp, 0, s.span, env, out, &live)
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                let pred = self.lower_expr(cond, env, out)?;
                let live = live_after(rest, live);
                self.lower_branches(pred, then_body, else_body, env, out, &live, s.span)
            }
            StmtKind::Return(_) => gap(s.span, "`return` inside a device loop"),
        }
    }

    fn lower_assign(
        &mut self,
        target: &str,
        value: &Expr,
        env: &mut Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<()> {
        if let ExprKind::Alloc { .. } = value.kind {
            return gap(value.span, "an allocation inside a device loop");
        }
        if let Some(v) = self.static_int(value, env) {
            env.insert(target.to_string(), Val::Int(v));
            return Ok(());
        }
        if let ExprKind::Name(n) = &value.kind {
            match env.get(n) {
                Some(v @ (Val::Tile(_) | Val::Grid(_) | Val::Host(_))) => {
                    let v = v.clone();
                    env.insert(target.to_string(), v);
                    return Ok(());
                }
                Some(Val::Value { .. } | Val::Ref { .. } | Val::Int(_)) | None => {}
            }
        }
        let is_ref = self.is_ref(value, env);
        let e = self.lower_expr(value, env, out)?;
        let py = py_name(target);
        out.push(assign(py.clone(), e));
        let val = if is_ref {
            Val::Ref { py }
        } else {
            Val::Value {
                py,
                ty: self.types.of(value).clone(),
            }
        };
        env.insert(target.to_string(), val);
        Ok(())
    }
}
