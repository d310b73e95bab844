//! The kernel: its name and parameters (binding their name kinds), and its statements: what
//! each assignment binds, which statements are device-only, stores and atomics on host tensors,
//! `hl.tile`/`hl.grid` loops and their variables, `if` conditions, `return` on the host, and the
//! block depth limit.

use super::{Checker, NameKind, R, Seg, assigned_kind, blocks_too_deep, key, unbound};
use crate::frontend::MAX_BLOCK_DEPTH;
use crate::ir::{AtomicOp, BinOp, Case, ExprKind, Loop, LoopKind, ParamKind, Span, Stmt, StmtKind};

impl Checker {
    pub(super) fn kernel(&mut self, case: &Case) -> R {
        let k = &case.kernel;
        self.at(key("name"), |c| c.ident(&k.name, Some(k.span), "def"))?;
        self.at(key("params"), |c| {
            for (i, p) in k.params.iter().enumerate() {
                c.at(Seg::Index(i), |c| {
                    c.at(key("name"), |c| c.ident(&p.name, Some(p.span), "parameter"))?;
                    if c.names.contains_key(&p.name) {
                        return Err(c.fail(
                            Some(p.span),
                            "parameter",
                            format!("duplicate parameter `{}`", p.name),
                        ));
                    }
                    let kind = match p.kind {
                        ParamKind::Tensor => NameKind::HostTensor,
                        ParamKind::Int => NameKind::HostInt,
                        ParamKind::Float => NameKind::HostFloat,
                        ParamKind::Bool => NameKind::HostBool,
                    };
                    c.names.insert(p.name.clone(), kind);
                    Ok(())
                })?;
            }
            Ok(())
        })?;
        self.at(key("body"), |c| c.body(&k.body))
    }

    fn body(&mut self, body: &[Stmt]) -> R {
        for (i, s) in body.iter().enumerate() {
            self.at(Seg::Index(i), |c| c.stmt(s))?;
        }
        Ok(())
    }

    /// Enters one more loop or branch at `span`.
    fn enter_block(&mut self, span: Span) -> R {
        self.blocks += 1;
        if self.blocks > MAX_BLOCK_DEPTH {
            let (construct, message) = blocks_too_deep();
            return Err(self.fail(Some(span), construct, message));
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> R {
        let span = s.span;
        self.at(key("kind"), |c| match &s.kind {
            StmtKind::Assign { target, value } => c.at(key("assign"), |c| {
                c.at(key("target"), |c| c.ident(target, Some(span), "assignment"))?;
                c.at(key("value"), |c| c.expr(value, 1))?;
                let kind = assigned_kind(c.device, &value.kind);
                c.names.insert(target.clone(), kind);
                Ok(())
            }),
            StmtKind::AugAssign { target, op, value } => c.at(key("aug-assign"), |c| {
                if !c.names.contains_key(target) {
                    return c.at(key("target"), |c| {
                        Err(c.fail(Some(span), "name", unbound(target)))
                    });
                }
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul => {}
                    BinOp::Div | BinOp::FloorDiv => {
                        return c.at(key("op"), |c| {
                            Err(c.fail(
                                Some(span),
                                "augmented assignment",
                                "only `+=`, `-=` and `*=` are part of a case script",
                            ))
                        });
                    }
                }
                c.at(key("value"), |c| c.expr(value, 1))
            }),
            StmtKind::Store {
                tensor,
                indices,
                value,
                explicit,
            } => c.at(key("store"), |c| {
                let construct = if *explicit {
                    "hl.store"
                } else {
                    "subscript store"
                };
                c.require_device(span, construct)?;
                c.host_tensor(tensor, span, construct, "writes")?;
                c.at(key("indices"), |c| c.indices(indices, 1, span))?;
                c.at(key("value"), |c| c.expr(value, 1))
            }),
            StmtKind::Atomic {
                op,
                tensor,
                indices,
                expected,
                value,
            } => c.at(key("atomic"), |c| {
                let func = format!("hl.{}", op.name());
                c.require_device(span, &func)?;
                let cas = match op {
                    AtomicOp::Cas => true,
                    AtomicOp::Add
                    | AtomicOp::And
                    | AtomicOp::Max
                    | AtomicOp::Min
                    | AtomicOp::Or
                    | AtomicOp::Xchg
                    | AtomicOp::Xor => false,
                };
                if cas != expected.is_some() {
                    let message = if cas {
                        "hl.atomic_cas takes (tensor, [indices], expected, value)".to_string()
                    } else {
                        format!("{func} takes (tensor, [indices], value)")
                    };
                    return c.at(key("expected"), |c| Err(c.fail(Some(span), &func, message)));
                }
                c.host_tensor(tensor, span, &func, "writes")?;
                c.at(key("indices"), |c| c.indices(indices, 1, span))?;
                if let Some(x) = expected {
                    c.at(key("expected"), |c| c.expr(x, 1))?;
                }
                c.at(key("value"), |c| c.expr(value, 1))
            }),
            StmtKind::For(lp) => c.at(key("for"), |c| {
                c.enter_block(span)?;
                c.for_loop(lp, span)?;
                c.blocks -= 1;
                Ok(())
            }),
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => c.at(key("if"), |c| {
                c.enter_block(span)?;
                c.require_device(span, "if")?;
                c.at(key("cond"), |c| {
                    if !super::is_condition(cond, &c.names) {
                        return Err(c.fail(Some(cond.span), "if", super::CONDITION_FORMS));
                    }
                    match cond.kind {
                        // A bool parameter by name: nothing below it to check.
                        ExprKind::Name(_) => Ok(()),
                        _ => c.expr(cond, 1),
                    }
                })?;
                c.at(key("then_body"), |c| c.body(then_body))?;
                c.at(key("else_body"), |c| c.body(else_body))?;
                c.blocks -= 1;
                Ok(())
            }),
            StmtKind::Return(values) => c.at(key("return"), |c| {
                if c.device > 0 {
                    return Err(c.fail(
                        Some(span),
                        "return",
                        "`return` inside a device loop is not part of a case script",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    c.at(Seg::Index(i), |c| c.expr(v, 1))?;
                }
                Ok(())
            }),
        })
    }

    fn for_loop(&mut self, lp: &Loop, span: Span) -> R {
        let fname = match lp.kind {
            LoopKind::Tile => "hl.tile",
            LoopKind::Grid => "hl.grid",
        };
        if lp.dims.is_empty() {
            return self.at(key("dims"), |c| {
                Err(c.fail(
                    Some(span),
                    fname,
                    format!("{fname}([]) has no dimension to iterate"),
                ))
            });
        }
        let begins = lp.dims.iter().filter(|d| d.begin.is_some()).count();
        let bounds_ok = if lp.list_form {
            begins == 0 || begins == lp.dims.len()
        } else {
            lp.dims.len() == 1
        };
        if !bounds_ok {
            return self.at(key("dims"), |c| {
                Err(c.fail(
                    Some(span),
                    fname,
                    format!("{fname} takes (end), (begin, end), or lists of them"),
                ))
            });
        }
        if lp.kind == LoopKind::Grid && lp.dims.iter().any(|d| d.block_size.is_some()) {
            return self.at(key("dims"), |c| {
                Err(c.fail(
                    Some(span),
                    "block_size",
                    "keyword `block_size` of hl.grid is not part of a case script",
                ))
            });
        }
        if lp.vars.len() != lp.dims.len() {
            return self.at(key("vars"), |c| {
                Err(c.fail(
                    Some(span),
                    "for",
                    format!(
                        "{} loop variables for a {}-dimensional {fname}",
                        lp.vars.len(),
                        lp.dims.len()
                    ),
                ))
            });
        }
        self.at(key("vars"), |c| {
            for (i, v) in lp.vars.iter().enumerate() {
                c.at(Seg::Index(i), |c| c.ident(v, Some(span), "for"))?;
            }
            Ok(())
        })?;
        self.at(key("dims"), |c| {
            for (i, d) in lp.dims.iter().enumerate() {
                c.at(Seg::Index(i), |c| {
                    if let Some(b) = &d.block_size {
                        c.at(key("block_size"), |c| c.expr(b, 1))?;
                    }
                    if let Some(b) = &d.begin {
                        c.at(key("begin"), |c| c.expr(b, 1))?;
                    }
                    c.at(key("end"), |c| c.expr(&d.end, 1))
                })?;
            }
            Ok(())
        })?;
        let kind = match lp.kind {
            LoopKind::Tile => NameKind::Tile,
            LoopKind::Grid => NameKind::GridIndex,
        };
        for v in &lp.vars {
            self.names.insert(v.clone(), kind);
        }
        self.device += 1;
        self.at(key("body"), |c| c.body(&lp.body))?;
        self.device -= 1;
        Ok(())
    }
}
