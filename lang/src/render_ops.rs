//! The spelling of [`TensorOp`]s in a rendered case script: the operators (`%`, `&`, `|`,
//! comparisons) as Python infix forms, every other op as its `torch.` or `hl.` function (the
//! frontend reads the method forms too, `x.sum(...)`, `x.exp()`; rendering picks one
//! spelling), `.transpose` as the method.

use crate::ir::{Expr, ReduceKind, TensorOp};
use crate::render::{compare, expr, infix, postfix};

fn call(func: &str, args: &[Expr]) -> String {
    let args: Vec<String> = args.iter().map(expr).collect();
    format!("{func}({})", args.join(", "))
}

/// Renders `e`, an [`crate::ir::ExprKind::Op`] of `op` on `args`.
pub(crate) fn op(e: &Expr, op: &TensorOp, args: &[Expr]) -> String {
    match (op, args) {
        (TensorOp::Mod, [l, r]) => infix(e, "%", l, r),
        (TensorOp::And, [l, r]) => infix(e, "&", l, r),
        (TensorOp::Or, [l, r]) => infix(e, "|", l, r),
        (TensorOp::Cmp(c), [l, r]) => compare(c.symbol(), l, r),
        (TensorOp::Transpose(a, b), [x]) => format!("{}.transpose({a}, {b})", postfix(x)),
        (
            TensorOp::Reduce {
                kind,
                dims,
                keepdim,
            },
            [x],
        ) => {
            let mut s = format!("torch.{}({}", kind_name(*kind), expr(x));
            match dims.as_deref() {
                None => {}
                Some([d]) => s.push_str(&format!(", dim={d}")),
                Some(ds) => {
                    let ds: Vec<String> = ds.iter().map(|d| d.to_string()).collect();
                    s.push_str(&format!(", dim=[{}]", ds.join(", ")));
                }
            }
            if *keepdim {
                s.push_str(", keepdim=True");
            }
            s.push(')');
            s
        }
        (TensorOp::Pad(pads), [x, fill]) => {
            let pads: Vec<String> = pads.iter().map(|p| p.to_string()).collect();
            let tuple = match pads.as_slice() {
                [one] => format!("({one},)"),
                _ => format!("({})", pads.join(", ")),
            };
            format!(
                "torch.nn.functional.pad({}, {tuple}, value={})",
                expr(x),
                expr(fill)
            )
        }
        (TensorOp::IntMin, _) => call("min", args),
        (TensorOp::IntMax, _) => call("max", args),
        (TensorOp::Dot, [a, b, acc]) => {
            format!("hl.dot({}, {}, acc={})", expr(a), expr(b), expr(acc))
        }
        (
            TensorOp::Exp
            | TensorOp::Relu
            | TensorOp::Rsqrt
            | TensorOp::Unary(_)
            | TensorOp::Maximum
            | TensorOp::Minimum
            | TensorOp::Where
            | TensorOp::Matmul
            | TensorOp::Bmm
            | TensorOp::Addmm
            | TensorOp::Baddbmm
            | TensorOp::Dot,
            _,
        )
        | (
            TensorOp::Mod
            | TensorOp::And
            | TensorOp::Or
            | TensorOp::Cmp(_)
            | TensorOp::Transpose(..)
            | TensorOp::Reduce { .. }
            | TensorOp::Pad(_),
            _,
        ) => call(op.construct(), args),
    }
}

fn kind_name(k: ReduceKind) -> &'static str {
    k.name()
}
