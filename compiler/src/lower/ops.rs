//! The torch ops of a kernel body that the codegen lowers (`lang::ir::ops`): the elementwise
//! selections and masks that Helion's Inductor lowering emits as one `jnp` call or operator each
//! (`torch.maximum`/`minimum` as `jnp.maximum`/`jnp.minimum`, `torch.relu(x)` as
//! `jnp.maximum(x, 0)`, a comparison as the comparison, `&`/`|` of masks or ints as the
//! bitwise operator, `torch.where` as `jnp.where`). JAX's promotion of a Python scalar (weak
//! types) is torch's for the case dtypes; a 0-d tensor beside a tensor of another dtype is not
//! (torch keeps the dimensioned operand's dtype within a category), so that is a gap. Every other op (transcendental
//! functions, `%`, reductions, transposes, matrix products, pads, Python's `min`/`max`) is a
//! [`super::Gap`]: the reference and real Helion still check it.

use super::expr::cmp_op;
use super::{Env, LResult, Lowerer, gap};
use lang::ir::types::Ty;
use lang::ir::{Expr, TensorOp};
use lang::pallas::{self, Expr as P, Jnp};

type PStmt = pallas::Stmt;

impl Lowerer<'_> {
    /// `e`, the op `op` on `args`.
    pub(super) fn lower_op(
        &mut self,
        e: &Expr,
        op: &TensorOp,
        args: &[Expr],
        env: &Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<P> {
        let lowered = match op {
            TensorOp::Maximum
            | TensorOp::Minimum
            | TensorOp::Relu
            | TensorOp::Cmp(_)
            | TensorOp::And
            | TensorOp::Or
            | TensorOp::Where => true,
            TensorOp::Exp
            | TensorOp::Rsqrt
            | TensorOp::Unary(_)
            | TensorOp::IntMin
            | TensorOp::IntMax
            | TensorOp::Mod
            | TensorOp::Reduce { .. }
            | TensorOp::Transpose(..)
            | TensorOp::Matmul
            | TensorOp::Bmm
            | TensorOp::Addmm
            | TensorOp::Baddbmm
            | TensorOp::Dot
            | TensorOp::Pad(_) => false,
        };
        if !lowered {
            return gap(e.span, op.construct());
        }
        // torch promotes a 0-d tensor operand only across categories (a float32 scalar beside a
        // bfloat16 block keeps bfloat16), JAX by its dtype: the two agree only where the
        // tensor operands share one dtype.
        let values = match op {
            TensorOp::Where => args.get(1..).unwrap_or_default(),
            _ => args,
        };
        let tensors: Vec<(lang::ir::DType, bool)> = values
            .iter()
            .filter_map(|a| match self.types.of(a) {
                Ty::Tensor { dtype, dims } => Some((*dtype, dims.is_empty())),
                _ => None,
            })
            .collect();
        if tensors.iter().any(|t| t.1) && tensors.iter().any(|t| t.0 != tensors[0].0) {
            return gap(
                e.span,
                format!(
                    "{} of a 0-d tensor and a tensor of another dtype",
                    op.construct()
                ),
            );
        }
        let mut xs = Vec::with_capacity(args.len());
        for a in args {
            xs.push(self.lower_expr(a, env, out)?);
        }
        let b = Box::new;
        Ok(match (op, xs.as_slice()) {
            (TensorOp::Maximum, [l, r]) => Jnp::Maximum(b(l.clone()), b(r.clone())).into(),
            (TensorOp::Minimum, [l, r]) => Jnp::Minimum(b(l.clone()), b(r.clone())).into(),
            (TensorOp::Relu, [x]) => Jnp::Maximum(b(x.clone()), b(P::Int(0))).into(),
            (TensorOp::Cmp(c), [l, r]) => l.clone().compare(cmp_op(*c), r.clone()),
            (TensorOp::And | TensorOp::Or, [l, r]) => P::Binary {
                op: if matches!(op, TensorOp::And) {
                    pallas::BinOp::BitAnd
                } else {
                    pallas::BinOp::BitOr
                },
                lhs: b(l.clone()),
                rhs: b(r.clone()),
            },
            (TensorOp::Where, [c, x, y]) => Jnp::Where {
                cond: b(c.clone()),
                a: b(x.clone()),
                b: b(y.clone()),
            }
            .into(),
            // A wrong operand count (the well-formedness check refuses it first).
            _ => return gap(e.span, op.construct()),
        })
    }
}
