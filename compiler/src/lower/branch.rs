//! `if` (and the guard of a dynamic unroll) as `jax.lax.cond` (spec §1.9): the names the
//! branches assign become `cond` operands, those still needed after the `if` its results,
//! their types harmonized between the two branches.

use super::carry::{carried_ty, cast_to, same_shape};
use super::stmt::assign;
use super::{Env, LResult, Lowerer, Val, gap, py_name};
use lang::ir::live::{Names, definitely_assigned};
use lang::ir::types::{Ty, promote};
use lang::ir::{Span, Stmt, walk};
use lang::pallas::{self, Expr as P, Function, Target};

type PStmt = pallas::Stmt;

impl Lowerer<'_> {
    /// `if` (and the guard of a dynamic unroll) as `jax.lax.cond(pred, then, else, *operands)`
    /// (spec §1.9).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lower_branches(
        &mut self,
        pred: P,
        then_body: &[Stmt],
        else_body: &[Stmt],
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live: &Names,
        span: Span,
    ) -> LResult<()> {
        let mut all = walk::assigned(then_body);
        for n in walk::assigned(else_body) {
            if !all.contains(&n) {
                all.push(n);
            }
        }
        let both: Names = definitely_assigned(then_body)
            .intersection(&definitely_assigned(else_body))
            .cloned()
            .collect();
        let mut operands = Vec::new();
        let mut outputs = Vec::new();
        for n in &all {
            let bound = match env.get(n) {
                Some(Val::Value { .. } | Val::Int(_)) => true,
                Some(Val::Ref { .. }) if live.contains(n.as_str()) => {
                    return gap(
                        span,
                        format!("the resident Ref `{n}` is reassigned inside a branch"),
                    );
                }
                Some(Val::Ref { .. } | Val::Tile(_) | Val::Grid(_) | Val::Host(_)) | None => false,
            };
            if bound {
                operands.push(n.clone());
            }
            if live.contains(n.as_str()) && (bound || both.contains(n.as_str())) {
                outputs.push(n.clone());
            }
        }
        let k = self.fresh("_cond");
        let suffix = k.trim_start_matches("_cond").to_string();
        let names = [
            format!("_if_branch_{suffix}"),
            format!("_else_branch_{suffix}"),
        ];
        let operand_exprs: Vec<P> = operands
            .iter()
            .map(|n| self.lower_name(n, env, span))
            .collect::<LResult<_>>()?;
        let mut bodies = Vec::new();
        // Per branch: what each output denotes at the branch's end.
        let mut ends: Vec<Vec<Option<Val>>> = Vec::new();
        for branch in [then_body, else_body] {
            let mark = env.mark();
            for n in &operands {
                let ty = env.get(n).and_then(carried_ty).unwrap_or(Ty::Int(None));
                env.insert(n.clone(), Val::Value { py: py_name(n), ty });
            }
            let mut b = Vec::new();
            self.lower_body(branch, env, &mut b, live)?;
            bodies.push(b);
            ends.push(outputs.iter().map(|n| env.get(n).cloned()).collect());
            env.rollback(mark);
        }
        // Output types, harmonized between the branches.
        let mut tys = Vec::new();
        for (k, n) in outputs.iter().enumerate() {
            let (Some(a), Some(b)) = (
                ends[0][k].as_ref().and_then(carried_ty),
                ends[1][k].as_ref().and_then(carried_ty),
            ) else {
                return gap(
                    span,
                    format!("`{n}` holds no value after one branch of an `if`"),
                );
            };
            if !same_shape(&a, &b) {
                return gap(
                    span,
                    format!("`{n}` has different shapes after the two branches of an `if`"),
                );
            }
            let t = match (a.dtype(), b.dtype()) {
                (Some(x), Some(y)) if x != y => match &a {
                    Ty::Tensor { dims, .. } => Ty::Tensor {
                        dtype: promote(x, y),
                        dims: dims.clone(),
                    },
                    Ty::HostTensor { .. }
                    | Ty::Int(_)
                    | Ty::Float
                    | Ty::Bool
                    | Ty::Mask { .. }
                    | Ty::Tile(_)
                    | Ty::GridIndex(_) => a.clone(),
                },
                _ => a.clone(),
            };
            tys.push(t);
        }
        for (i, (body, end)) in bodies.iter_mut().zip(&ends).enumerate() {
            let results: Vec<P> = outputs
                .iter()
                .zip(end)
                .zip(&tys)
                .map(|((n, v), t)| {
                    let e = self.val_expr(n, v.as_ref(), span)?;
                    let from = v.as_ref().and_then(carried_ty).unwrap_or(Ty::Int(None));
                    Ok(cast_to(e, &from, t))
                })
                .collect::<LResult<_>>()?;
            match results.len() {
                0 => {}
                1 => body.push(PStmt::Return(results.into_iter().next())),
                _ => body.push(PStmt::Return(Some(P::Tuple(results)))),
            }
            let params = operands.iter().map(|n| py_name(n)).collect();
            out.push(PStmt::Def(Function {
                name: names[i].clone(),
                params,
                body: std::mem::take(body),
            }));
        }
        let call = P::Cond {
            pred: Box::new(pred),
            then_fn: names[0].clone(),
            else_fn: names[1].clone(),
            operands: operand_exprs,
        };
        let py: Vec<String> = outputs.iter().map(|n| py_name(n)).collect();
        match py.len() {
            0 => out.push(PStmt::Expr(call)),
            1 => out.push(assign(py[0].clone(), call)),
            _ => out.push(PStmt::Assign {
                target: Target::Tuple(py.clone()),
                value: call,
            }),
        }
        for ((n, p), t) in outputs.iter().zip(py).zip(tys) {
            env.insert(n.clone(), Val::Value { py: p, ty: t });
        }
        Ok(())
    }
}
