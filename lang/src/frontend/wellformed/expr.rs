//! Expressions and index lists: names bound before use, finite literals, tile attributes on
//! tile variables, loads of host tensors and subscripts of device values, device-only
//! constructors and host-only allocations, the canonical index forms, and the expression depth
//! limit.

use super::{Checker, NameKind, R, Seg, expr_too_deep, key, unbound};
use crate::frontend::MAX_EXPR_DEPTH;
use crate::ir::{AllocKind, AllocShape, Expr, ExprKind, Index, Span, TensorOp, ViewOp};

impl Checker {
    pub(super) fn indices(&mut self, indices: &[Index], depth: usize, span: Span) -> R {
        for (i, index) in indices.iter().enumerate() {
            self.at(Seg::Index(i), |c| match index {
                Index::Full | Index::NewAxis => Ok(()),
                Index::Int(k) => c.at(key("int"), |c| c.int(*k, Some(span))),
                Index::Slice { start, stop, step } => c.at(key("slice"), |c| {
                    if start.is_none() && stop.is_none() && step.is_none() {
                        return Err(c.fail(
                            Some(span),
                            "slice",
                            "a slice without bounds or step is the index `full` (`:`)",
                        ));
                    }
                    for (field, b) in [("start", start), ("stop", stop), ("step", step)] {
                        if let Some(b) = b {
                            c.at(key(field), |c| c.expr(b, depth))?;
                        }
                    }
                    Ok(())
                }),
                Index::Expr(e) => c.at(key("expr"), |c| {
                    if let ExprKind::Int(_) = e.kind {
                        return Err(c.fail(
                            Some(e.span),
                            "int",
                            "an int literal index is the index `int`, not an `expr`",
                        ));
                    }
                    c.expr(e, depth)
                }),
            })?;
        }
        Ok(())
    }

    fn exprs(&mut self, field: &'static str, es: &[Expr], depth: usize) -> R {
        self.at(key(field), |c| {
            for (i, e) in es.iter().enumerate() {
                c.at(Seg::Index(i), |c| c.expr(e, depth))?;
            }
            Ok(())
        })
    }

    /// `e` at nesting `depth` (a statement's own expressions are at 1).
    pub(super) fn expr(&mut self, e: &Expr, depth: usize) -> R {
        let span = Some(e.span);
        if depth > MAX_EXPR_DEPTH {
            let (construct, message) = expr_too_deep();
            return Err(self.fail(span, construct, message));
        }
        let sub = depth + 1;
        self.at(key("kind"), |c| match &e.kind {
            ExprKind::Name(n) => c.at(key("name"), |c| {
                match c.names.get(n) {
                    None => Err(c.fail(span, "name", unbound(n))),
                    // A whole `if` condition never gets here (`is_condition`).
                    Some(NameKind::HostBool) => {
                        Err(c.fail(span, "bool parameter", super::BOOL_PARAM_USE))
                    }
                    Some(_) => Ok(()),
                }
            }),
            ExprKind::Int(v) => c.at(key("int"), |c| c.int(*v, span)),
            // Non-finite values are `float("-inf")` literals; an overflowing `1e999` is refused
            // by the frontend, which sees the spelling.
            ExprKind::Float(_) => Ok(()),
            ExprKind::Size { value, dim } => c.at(key("size"), |c| {
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.at(key("dim"), |c| c.int(*dim, span))
            }),
            ExprKind::TileAttr { tile, attr } => c.at(key("tile-attr"), |c| {
                if c.names.get(tile) != Some(&NameKind::Tile) {
                    let a = attr.name();
                    return c.at(key("tile"), |c| {
                        Err(c.fail(span, &format!(".{a}"), format!("attribute `.{a}` is not part of a case script (tile attributes .begin .end .index .count .block_size .id on hl.tile variables); `{tile}` is not an hl.tile variable")))
                    });
                }
                Ok(())
            }),
            ExprKind::Binary { lhs, rhs, .. } => c.at(key("binary"), |c| {
                c.at(key("lhs"), |c| c.expr(lhs, sub))?;
                c.at(key("rhs"), |c| c.expr(rhs, sub))
            }),
            ExprKind::Compare { lhs, rhs, .. } => c.at(key("compare"), |c| {
                c.at(key("lhs"), |c| c.expr(lhs, sub))?;
                c.at(key("rhs"), |c| c.expr(rhs, sub))
            }),
            ExprKind::Load {
                tensor,
                indices,
                explicit,
            } => c.at(key("load"), |c| {
                let construct = if *explicit { "hl.load" } else { "a host-tensor subscript" };
                c.require_device(e.span, construct)?;
                c.host_tensor(tensor, e.span, if *explicit { "hl.load" } else { "load" }, "reads")?;
                c.at(key("indices"), |c| c.indices(indices, sub, e.span))
            }),
            ExprKind::Subscript { value, indices } => c.at(key("subscript"), |c| {
                c.require_device(e.span, "a subscript")?;
                if let ExprKind::Name(n) = &value.kind
                    && c.names.get(n) == Some(&NameKind::HostTensor)
                {
                    return c.at(key("value"), |c| {
                        Err(c.fail(
                            span,
                            "subscript",
                            format!("a subscript of the host tensor `{n}` is a load, not a device subscript"),
                        ))
                    });
                }
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.at(key("indices"), |c| c.indices(indices, sub, e.span))
            }),
            ExprKind::Arange { start, end, step } => c.at(key("arange"), |c| {
                if let Some(s) = start {
                    c.at(key("start"), |c| c.expr(s, sub))?;
                }
                c.at(key("end"), |c| c.expr(end, sub))?;
                if let Some(s) = step {
                    c.at(key("step"), |c| c.expr(s, sub))?;
                }
                Ok(())
            }),
            ExprKind::Zeros { shape, .. } => c.at(key("zeros"), |c| {
                c.require_device(e.span, "hl.zeros")?;
                c.exprs("shape", shape, sub)
            }),
            ExprKind::Full { shape, value, .. } => c.at(key("full"), |c| {
                c.require_device(e.span, "hl.full")?;
                c.exprs("shape", shape, sub)?;
                c.at(key("value"), |c| c.expr(value, sub))
            }),
            ExprKind::Cast { value, .. } => {
                c.at_path(&[key("cast"), key("value")], |c| c.expr(value, sub))
            }
            ExprKind::Sum { value, dim } => c.at(key("sum"), |c| {
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.at(key("dim"), |c| c.int(*dim, span))
            }),
            ExprKind::View { value, op } => c.at(key("view"), |c| {
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.at(key("op"), |c| match op {
                    ViewOp::Reshape(dims) => c.exprs("reshape", dims, sub),
                    ViewOp::View(dims) => c.exprs("view", dims, sub),
                    ViewOp::Squeeze(d) => c.at(key("squeeze"), |c| c.int(*d, span)),
                    ViewOp::Unsqueeze(d) => c.at(key("unsqueeze"), |c| c.int(*d, span)),
                    ViewOp::ViewAs(other) => c.at(key("view-as"), |c| c.expr(other, sub)),
                })
            }),
            ExprKind::Permute { value, dims } => c.at(key("permute"), |c| {
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.ints("dims", dims, span)
            }),
            ExprKind::Op { op, args } => c.at(key("op"), |c| {
                let construct = op.construct();
                // Python's `min`/`max` of ints is host arithmetic as much as device code (an
                // outer loop's bound); every other op computes on device values.
                if !matches!(op, TensorOp::IntMin | TensorOp::IntMax) {
                    c.require_device(e.span, construct)?;
                }
                let (lo, hi) = op.arity();
                if !(lo..=hi).contains(&args.len()) {
                    return Err(c.fail(
                        span,
                        construct,
                        format!("{construct} takes {lo} to {hi} operands, not {}", args.len()),
                    ));
                }
                c.at(key("op"), |c| match op {
                    TensorOp::Reduce { dims: Some(d), .. } => c.ints("dims", d, span),
                    TensorOp::Transpose(a, b) => c.ints("dims", &[*a, *b], span),
                    TensorOp::Pad(pads) => c.ints("pads", pads, span),
                    TensorOp::Reduce { dims: None, .. }
                    | TensorOp::Exp
                    | TensorOp::Unary(_)
                    | TensorOp::Relu
                    | TensorOp::Rsqrt
                    | TensorOp::Maximum
                    | TensorOp::Minimum
                    | TensorOp::IntMin
                    | TensorOp::IntMax
                    | TensorOp::Mod
                    | TensorOp::And
                    | TensorOp::Or
                    | TensorOp::Cmp(_)
                    | TensorOp::Where
                    | TensorOp::Matmul
                    | TensorOp::Bmm
                    | TensorOp::Addmm
                    | TensorOp::Baddbmm
                    | TensorOp::Dot => Ok(()),
                })?;
                c.exprs("args", args, sub)
            }),
            ExprKind::Alloc { kind, shape, .. } => c.at(key("alloc"), |c| {
                if c.device > 0 {
                    let f = match (kind, shape) {
                        (AllocKind::Empty, AllocShape::Dims(_)) => "torch.empty",
                        (AllocKind::Zeros, AllocShape::Dims(_)) => "torch.zeros",
                        (AllocKind::Empty, AllocShape::Like(_)) => "torch.empty_like",
                        (AllocKind::Zeros, AllocShape::Like(_)) => "torch.zeros_like",
                    };
                    return Err(c.fail(
                        span,
                        f,
                        format!("{f} allocates on the host: call it outside the hl.tile/hl.grid loops"),
                    ));
                }
                c.at(key("shape"), |c| match shape {
                    AllocShape::Dims(dims) => c.exprs("dims", dims, sub),
                    AllocShape::Like(t) => c.at(key("like"), |c| c.expr(t, sub)),
                })
            }),
        })
    }
}
