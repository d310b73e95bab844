//! Statements: what each assignment binds (host allocations and host views take their tensor
//! from the host environment), augmented assignments, stores and atomics against their indexed
//! target (with Helion's store rank rule), loops typed until loop-carried ints are stable, and
//! branches.

use super::{Dim, Infer, Ty, TypeError, broadcast, err};
use crate::ir::{ExprKind, Loop, LoopKind, NodeKey, Span, Stmt, StmtKind};

/// Helion 1.5.1's store rank rule (`TensorType.propagate_setitem`, D-1.5.1-20): a stored value
/// has the rank of the indexed target, or rank 0, or a higher rank whose extra leading dims are
/// 1; torch's broadcasting of a lower-rank value is refused (`RankMismatch` in Helion, a
/// tracing refusal here).
fn store_rank(target: &[Dim], value: &[Dim], span: Span) -> Result<(), TypeError> {
    let (lhs, rhs) = (target.len(), value.len());
    let extra_ones = rhs > lhs && value[..rhs - lhs].iter().all(|d| d.size == 1);
    if rhs == 0 || rhs == lhs || extra_ones {
        return Ok(());
    }
    let shape = |d: &[Dim]| {
        let v: Vec<String> = d.iter().map(|d| d.size.to_string()).collect();
        format!("({}{})", v.join(", "), if v.len() == 1 { "," } else { "" })
    };
    Err(err(
        span,
        format!(
            "Expected ndim={lhs}, but got ndim={rhs} (LHS shape: {}, RHS shape: {}). You have {}.",
            shape(target),
            shape(value),
            if rhs < lhs {
                "too few indices"
            } else {
                "too many indices"
            }
        ),
    ))
}

impl<'a> Infer<'a> {
    pub(super) fn body(&mut self, body: &'a [Stmt]) -> Result<(), TypeError> {
        for stmt in body {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &'a Stmt) -> Result<(), TypeError> {
        match &stmt.kind {
            StmtKind::Assign { target, value } => {
                let mut ty = self.expr(value)?.clone();
                let host_binding = matches!(value.kind, ExprKind::Alloc { .. })
                    || matches!(
                        (&value.kind, &ty),
                        (ExprKind::View { .. }, Ty::HostTensor { .. })
                    );
                if let (true, Some(t)) = (host_binding, self.host.tensors.get(target)) {
                    ty = Ty::HostTensor {
                        dtype: t.dtype,
                        shape: t.shape.iter().map(|&d| d as i64).collect(),
                        storage: t.storage,
                    };
                    self.exprs.insert(NodeKey::of(value), ty.clone());
                }
                self.bind(target, ty);
            }
            StmtKind::AugAssign { target, op, value } => {
                if !self.env.contains_key(target.as_str()) {
                    return Err(err(stmt.span, format!("name `{target}` is not bound")));
                }
                self.expr(value)?;
                let old = &self.env[target.as_str()];
                let ty = self.binary(*op, old, self.typed(value), stmt.span)?;
                self.bind(target, ty);
            }
            StmtKind::Store {
                tensor,
                indices,
                value,
                ..
            }
            | StmtKind::Atomic {
                tensor,
                indices,
                value,
                ..
            } => {
                let dims: Vec<Dim> = match self.env.get(tensor.as_str()) {
                    Some(Ty::HostTensor { shape, .. }) => {
                        shape.iter().map(|&d| Dim::fixed(d)).collect()
                    }
                    _ => return Err(err(stmt.span, format!("`{tensor}` is not a host tensor"))),
                };
                let target = self.index(&dims, indices, stmt.span)?;
                if let StmtKind::Atomic {
                    expected: Some(x), ..
                } = &stmt.kind
                {
                    self.expr(x)?;
                }
                match self.expr(value)? {
                    Ty::Tensor { dims: vd, .. } => {
                        if matches!(stmt.kind, StmtKind::Store { .. }) {
                            store_rank(&target, vd, stmt.span)?;
                        }
                        let b = broadcast(&target, vd);
                        let fits = b.is_some_and(|b| {
                            b.iter().map(|d| d.size).eq(target.iter().map(|d| d.size))
                        });
                        if !fits {
                            return Err(err(
                                stmt.span,
                                format!(
                                    "stored value of shape {:?} does not fit `{tensor}[...]` of shape {:?}",
                                    vd.iter().map(|d| d.size).collect::<Vec<_>>(),
                                    target.iter().map(|d| d.size).collect::<Vec<_>>()
                                ),
                            ));
                        }
                    }
                    Ty::Int(_) | Ty::Float => {}
                    other => return Err(err(stmt.span, format!("cannot store {other:?}"))),
                }
            }
            StmtKind::For(lp) => self.for_loop(lp)?,
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.expr(cond)?;
                self.body(then_body)?;
                self.body(else_body)?;
            }
            StmtKind::Return(values) => {
                for v in values {
                    self.expr(v)?;
                }
            }
        }
        Ok(())
    }

    /// Binds `name` to `ty`; inside a loop, logs the binding it replaces (see
    /// [`Infer::for_loop`]).
    fn bind(&mut self, name: &'a str, ty: Ty) {
        let old = self.env.insert(name, ty);
        if self.loop_depth > 0 {
            self.rebound.push((name, old));
        }
    }

    fn for_loop(&mut self, lp: &'a Loop) -> Result<(), TypeError> {
        for d in &lp.dims {
            if let Some(b) = &d.begin {
                self.expr(b)?;
            }
            self.expr(&d.end)?;
            if let Some(b) = &d.block_size {
                self.expr(b)?;
            }
        }
        for (var, &id) in lp.vars.iter().zip(self.blocks.loop_ids(lp)) {
            let ty = match lp.kind {
                LoopKind::Tile => Ty::Tile(id),
                LoopKind::Grid => Ty::GridIndex(id),
            };
            self.bind(var, ty);
        }
        // Loop-carried values keep their type across iterations, except ints whose value
        // changes (`cnt = cnt + 1`): those are widened to "not static" before a second pass,
        // which checks that the body is stable under its own outputs.
        //
        // When no name bound at the loop's entry changed type (after widening), the second
        // pass would see the environment the first saw and compute the same types (a name the
        // body reads before binding it must have been bound at the entry, or the first pass
        // would have failed), so it is skipped. Without the skip, a body two loops deep was
        // typed four times.
        //
        // Only a name the body binds can change, and the log of bindings replaced in a loop
        // holds, at a name's first entry after `mark`, its type at this loop's entry (`None`
        // when it was not bound there): a copy of the whole environment per loop, every host
        // tensor's shape included, was a tenth of `infer` (callgrind over the corpus cases).
        let mark = self.rebound.len();
        self.loop_depth += 1;
        let typed = self.body(&lp.body);
        self.loop_depth -= 1;
        typed?;
        let mut stable = true;
        for i in mark..self.rebound.len() {
            let (name, Some(at_entry)) = &self.rebound[i] else {
                continue;
            };
            if self.rebound[mark..i].iter().any(|(n, _)| n == name) {
                continue;
            }
            // The environment only grows: every name bound at the entry is still bound.
            let Some(ty) = self.env.get_mut(name) else {
                stable = false;
                continue;
            };
            if let (Ty::Int(Some(a)), Ty::Int(Some(b))) = (at_entry, &*ty)
                && a != b
            {
                *ty = Ty::Int(None);
            }
            stable &= ty == at_entry;
        }
        if !stable {
            self.loop_depth += 1;
            let typed = self.body(&lp.body);
            self.loop_depth -= 1;
            typed?;
        }
        if self.loop_depth == 0 {
            // Only enclosing loops read the log.
            self.rebound.clear();
        }
        Ok(())
    }
}
